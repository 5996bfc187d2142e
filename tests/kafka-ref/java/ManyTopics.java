// Kafka's Java client 4.4, run from source by examples/observe_scale.rs:
// creates topics PREFIX-FIRST .. PREFIX-(FIRST+COUNT-1) (three digits)
// with PARTITIONS partitions of RF replicas each, then writes RECORDS
// records of 100 bytes to every partition of them; prints `created N` and
// `wrote M`.
//
//   java -cp 'tests/kafka-ref/target/lib/*' ManyTopics.java BOOTSTRAP PREFIX FIRST COUNT PARTITIONS RF RECORDS
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.StringSerializer;

public class ManyTopics {
    public static void main(String[] args) throws Exception {
        String boot = args[0], prefix = args[1];
        int first = Integer.parseInt(args[2]), count = Integer.parseInt(args[3]);
        int partitions = Integer.parseInt(args[4]);
        short rf = Short.parseShort(args[5]);
        int records = Integer.parseInt(args[6]);
        List<String> names = new ArrayList<>();
        for (int i = first; i < first + count; i++) names.add(String.format("%s-%03d", prefix, i));
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot))) {
            List<NewTopic> topics = new ArrayList<>();
            for (String n : names) topics.add(new NewTopic(n, partitions, rf));
            admin.createTopics(topics).all().get();
        }
        System.out.println("created " + names.size());
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("linger.ms", "50");
        String value = "x".repeat(100);
        long wrote = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (String n : names)
                for (int part = 0; part < partitions; part++)
                    for (int r = 0; r < records; r++) {
                        producer.send(new ProducerRecord<>(n, part, null, value));
                        wrote++;
                    }
            producer.flush();
        }
        System.out.println("wrote " + wrote);
    }
}
