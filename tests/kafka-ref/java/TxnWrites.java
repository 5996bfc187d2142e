// Kafka's Java client 4.4, run from source by tests/observe_kafka.rs:
// transactional.id ID writes to TOPIC-0 one transaction per argument
// after the first three, each `commit:V,V...` or `abort:V,...`, every
// record flushed before the transaction ends; prints `delivered OFFSET`
// for each record, in order. Kafka 4.x brokers run these under
// transaction version 2 (KIP-890): each end bumps the producer epoch, and
// its marker carries the bumped one.
//
//   java -cp 'tests/kafka-ref/target/lib/*' TxnWrites.java BOOTSTRAP TOPIC ID TXN...
import java.util.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnWrites {
    public static void main(String[] args) throws Exception {
        String boot = args[0], topic = args[1], id = args[2];
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("transactional.id", id);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        // One transaction's records in one batch: sent together on flush.
        p.put("linger.ms", "5000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            for (String txn : Arrays.copyOfRange(args, 3, args.length)) {
                String[] endAndValues = txn.split(":", 2);
                producer.beginTransaction();
                List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
                for (String v : endAndValues[1].split(",")) {
                    sent.add(producer.send(new ProducerRecord<>(topic, 0, null, v)));
                }
                producer.flush();
                for (var f : sent) System.out.println("delivered " + f.get().offset());
                switch (endAndValues[0]) {
                    case "commit" -> producer.commitTransaction();
                    case "abort" -> producer.abortTransaction();
                    default -> throw new IllegalArgumentException("commit or abort, not " + endAndValues[0]);
                }
            }
        }
    }
}
