// Kafka's Java client 4.4, run from source by tests/kafka_txn_version.rs
// against Apache Kafka 4.4 and against `mk-tui serve --rules kafka`: the
// transaction protocol the client speaks (version 2, KIP-890, when the
// cluster finalizes `transaction.version` 2) and what it sees of it.
//
// Producer A (transactional.id ID) commits "a", aborts "b"; producer B of
// the same id then inits, which fences A: A's next transaction fails; B
// commits "d". After each step the client's own producer epoch is read
// from its TransactionManager (the epoch it sends: under version 2 EndTxn
// v5 gives it the bumped one). Prints one JSON document:
//   {"v2": bool, "epochs": {...}, "zombie": "ExceptionName", "committed": [...]}
//
//   java -cp 'tests/kafka-ref/target/lib/*' TxnVersion.java BOOTSTRAP TOPIC ID
import java.lang.reflect.*;
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.*;

public class TxnVersion {
    static KafkaProducer<String, String> producer(String boot, String id) {
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("transactional.id", id);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("delivery.timeout.ms", "30000");
        p.put("request.timeout.ms", "10000");
        return new KafkaProducer<>(p);
    }

    static Object manager(KafkaProducer<?, ?> p) throws Exception {
        Field f = KafkaProducer.class.getDeclaredField("transactionManager");
        f.setAccessible(true);
        return f.get(p);
    }

    /** The epoch the client holds (TransactionManager.producerIdAndEpoch()). */
    static short epoch(KafkaProducer<?, ?> p) throws Exception {
        Object tm = manager(p);
        Method m = tm.getClass().getDeclaredMethod("producerIdAndEpoch");
        m.setAccessible(true);
        Object pe = m.invoke(tm);
        return pe.getClass().getField("epoch").getShort(pe);
    }

    static boolean v2(KafkaProducer<?, ?> p) throws Exception {
        Object tm = manager(p);
        Method m = tm.getClass().getDeclaredMethod("isTransactionV2Enabled");
        m.setAccessible(true);
        return (Boolean) m.invoke(tm);
    }

    static void one(KafkaProducer<String, String> p, String topic, String value, boolean commit)
            throws Exception {
        p.beginTransaction();
        p.send(new ProducerRecord<>(topic, 0, null, value)).get();
        if (commit) p.commitTransaction();
        else p.abortTransaction();
    }

    public static void main(String[] args) throws Exception {
        String boot = args[0], topic = args[1], id = args[2];
        Properties ap = new Properties();
        ap.put("bootstrap.servers", boot);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get();
        }
        Map<String, Object> epochs = new LinkedHashMap<>();
        String zombie = "none";
        boolean isV2;
        KafkaProducer<String, String> a = producer(boot, id);
        a.initTransactions();
        epochs.put("init", epoch(a));
        one(a, topic, "a", true);
        isV2 = v2(a);
        epochs.put("after_commit", epoch(a));
        one(a, topic, "b", false);
        epochs.put("after_abort", epoch(a));
        try (KafkaProducer<String, String> b = producer(boot, id)) {
            b.initTransactions();
            epochs.put("new_producer_init", epoch(b));
            try {
                one(a, topic, "c", true);
            } catch (Exception e) {
                Throwable t = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
                zombie = t.getClass().getSimpleName();
            }
            one(b, topic, "d", true);
            epochs.put("new_producer_after_commit", epoch(b));
        }
        try {
            a.close(Duration.ofSeconds(5));
        } catch (Exception ignored) {
        }
        List<String> committed = new ArrayList<>();
        Properties cp = new Properties();
        cp.put("bootstrap.servers", boot);
        cp.put("group.id", id + "-reader");
        cp.put("isolation.level", "read_committed");
        cp.put("auto.offset.reset", "earliest");
        cp.put("enable.auto.commit", "false");
        cp.put("key.deserializer", StringDeserializer.class.getName());
        cp.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
            c.assign(List.of(new org.apache.kafka.common.TopicPartition(topic, 0)));
            long deadline = System.currentTimeMillis() + 20000;
            while (!committed.contains("d") && System.currentTimeMillis() < deadline) {
                for (var r : c.poll(Duration.ofMillis(200))) committed.add(r.value());
            }
        }
        StringBuilder out = new StringBuilder("{\"v2\":" + isV2 + ",\"epochs\":{");
        int i = 0;
        for (var e : epochs.entrySet()) {
            if (i++ > 0) out.append(',');
            out.append('"').append(e.getKey()).append("\":").append(e.getValue());
        }
        out.append("},\"zombie\":\"").append(zombie).append("\",\"committed\":[");
        for (int j = 0; j < committed.size(); j++) {
            if (j > 0) out.append(',');
            out.append('"').append(committed.get(j)).append('"');
        }
        System.out.println(out.append("]}"));
    }
}
