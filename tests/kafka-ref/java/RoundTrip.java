// Kafka's Java client 4.4, run from source by tests/common/kafka_ref.rs:
// creates TOPIC (one partition, RF 3), writes two records in a committed
// transaction (a header and a CreateTime each) and one in an aborted one,
// then reads the partition at read_committed and prints one line a record:
// `offset key value timestamp header=value`, then `end HW`.
//
//   java -cp 'tests/kafka-ref/target/lib/*' RoundTrip.java BOOTSTRAP TOPIC RF
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.*;

public class RoundTrip {
    public static void main(String[] args) throws Exception {
        String boot = args[0], topic = args[1];
        short rf = Short.parseShort(args[2]);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, rf))).all().get();
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("transactional.id", "roundtrip-" + topic);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 2; i++) {
                ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, 1000L + i, "k" + i, "v" + i);
                r.headers().add("h", ("x" + i).getBytes());
                producer.send(r).get();
            }
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, 2000L, "k", "aborted")).get();
            producer.abortTransaction();
        }
        Properties c = new Properties();
        c.put("bootstrap.servers", boot);
        c.put("isolation.level", "read_committed");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            int seen = 0;
            long deadline = System.currentTimeMillis() + 20000;
            while (seen < 2 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    StringBuilder h = new StringBuilder();
                    for (Header header : r.headers()) h.append(header.key()).append('=').append(new String(header.value()));
                    System.out.println(r.offset() + " " + r.key() + " " + r.value() + " " + r.timestamp() + " " + h);
                    seen++;
                }
            }
            System.out.println("end " + consumer.endOffsets(List.of(tp)).get(tp));
        }
    }
}
