// Kafka's Java client 4.4, run from source by tests/kafka_differential.rs:
// finalizes feature NAME at LEVEL on the cluster (Admin.updateFeatures, an
// upgrade or a safe downgrade, as `kafka-features.sh` does), then prints
// the finalized level the cluster describes.
//
//   java -cp 'tests/kafka-ref/target/lib/*' Features.java BOOTSTRAP NAME LEVEL
import java.util.*;
import org.apache.kafka.clients.admin.*;

public class Features {
    public static void main(String[] args) throws Exception {
        String boot = args[0], name = args[1];
        short level = Short.parseShort(args[2]);
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        try (Admin admin = Admin.create(p)) {
            var finalized = admin.describeFeatures().featureMetadata().get().finalizedFeatures().get(name);
            short now = finalized == null ? 0 : finalized.maxVersionLevel();
            if (now != level) {
                var type = level < now ? FeatureUpdate.UpgradeType.SAFE_DOWNGRADE : FeatureUpdate.UpgradeType.UPGRADE;
                admin.updateFeatures(Map.of(name, new FeatureUpdate(level, type)), new UpdateFeaturesOptions()).all().get();
            }
            // Every broker learns it from the metadata log: wait until the
            // one asked describes it.
            long deadline = System.currentTimeMillis() + 30000;
            while (System.currentTimeMillis() < deadline) {
                var f = admin.describeFeatures().featureMetadata().get().finalizedFeatures().get(name);
                if (f != null && f.maxVersionLevel() == level) {
                    System.out.println(name + " " + level);
                    return;
                }
                Thread.sleep(200);
            }
            throw new IllegalStateException(name + " is not finalized at " + level);
        }
    }
}
