// Kafka's Java client 4.4, run from source by tests/common/kafka_ref.rs:
// waits until the cluster lists exactly the brokers named (the ones that
// are registered and not fenced, as DescribeCluster returns them), at most
// 90 s, and prints them; exits 1 if they never are.
//
//   java -cp 'tests/kafka-ref/target/lib/*' WaitBrokers.java BOOTSTRAP 1,3
import java.util.*;
import java.util.stream.*;
import org.apache.kafka.clients.admin.*;

public class WaitBrokers {
    public static void main(String[] args) throws Exception {
        String boot = args[0];
        Set<Integer> want = Arrays.stream(args[1].split(",")).map(Integer::parseInt).collect(Collectors.toCollection(TreeSet::new));
        long deadline = System.currentTimeMillis() + 90_000;
        Set<Integer> seen = Set.of();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot, "request.timeout.ms", "5000", "default.api.timeout.ms", "10000"))) {
            while (System.currentTimeMillis() < deadline) {
                try {
                    seen = admin.describeCluster().nodes().get().stream().map(n -> n.id()).collect(Collectors.toCollection(TreeSet::new));
                    if (seen.equals(want)) {
                        System.out.println("brokers " + seen);
                        return;
                    }
                } catch (Exception e) {
                    // A node that is going away may fail the call: ask again.
                }
                Thread.sleep(250);
            }
        }
        System.err.println("brokers " + seen + ", not " + want + ", after 90 s");
        System.exit(1);
    }
}
