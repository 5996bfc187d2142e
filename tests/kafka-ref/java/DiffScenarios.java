// The Kafka differential's scenarios on Kafka's own Java client 4.4
// (tests/kafka_differential.rs), run against Apache Kafka and `mk-tui
// serve --rules kafka` alike. Prints one line per scenario:
// `NAME<TAB>JSON`, the JSON being that scenario's observables (offsets,
// values at both isolation levels, end offsets, exception class names);
// an exception a scenario did not expect is its observable too.
//
//   java -cp 'tests/kafka-ref/target/lib/*' DiffScenarios.java BOOTSTRAP TAG
import java.time.Duration;
import java.util.*;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class DiffScenarios {
    static String boot, tag;

    public static void main(String[] args) throws Exception {
        boot = args[0];
        tag = args[1];
        Map<String, Scenario> all = new LinkedHashMap<>();
        all.put("java_transactions", DiffScenarios::transactions);
        all.put("java_zombie", DiffScenarios::zombie);
        all.put("java_idempotent", DiffScenarios::idempotent);
        all.put("java_send_offsets", DiffScenarios::sendOffsets);
        all.put("java_binary", DiffScenarios::binary);
        for (Map.Entry<String, Scenario> e : all.entrySet()) {
            String json;
            try {
                json = e.getValue().run();
            } catch (Exception ex) {
                json = "{\"unexpected\":" + q(name(ex)) + "}";
            }
            System.out.println(e.getKey() + "\t" + json);
        }
    }

    interface Scenario {
        String run() throws Exception;
    }

    static String q(String s) {
        return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** An exception by its class's simple name, unwrapping ExecutionException. */
    static String name(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof org.apache.kafka.common.KafkaException
                && t.getClass() == org.apache.kafka.common.KafkaException.class) && t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName();
    }

    static String topic(String name, int partitions) throws Exception {
        String t = tag + "-" + name;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot))) {
            admin.createTopics(List.of(new NewTopic(t, partitions, (short) 3))).all().get();
        }
        return t;
    }

    static KafkaProducer<String, String> producer(Map<String, Object> extra) {
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("delivery.timeout.ms", 15000);
        p.put("request.timeout.ms", 10000);
        p.put("max.block.ms", 20000);
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    static KafkaConsumer<String, String> consumer(String isolation, String group) {
        Properties c = new Properties();
        c.put("bootstrap.servers", boot);
        c.put("isolation.level", isolation);
        c.put("enable.auto.commit", "false");
        if (group != null) c.put("group.id", group);
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaConsumer<>(c);
    }

    /** `[offset, value]` pairs of partition 0 up to the isolation level's end. */
    static String read(String topic, String isolation) {
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = consumer(isolation, null)) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp);
            List<String> out = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 15000;
            while (c.position(tp) < end && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    out.add("[" + r.offset() + "," + q(r.value()) + "]");
                }
            }
            return "{\"end\":" + end + ",\"records\":[" + String.join(",", out) + "]}";
        }
    }

    static String both(String topic) {
        return "{\"read_committed\":" + read(topic, "read_committed")
                + ",\"read_uncommitted\":" + read(topic, "read_uncommitted") + "}";
    }

    /** Waits until read_committed's end reaches read_uncommitted's (the markers written). */
    static void settle(String topic) throws InterruptedException {
        TopicPartition tp = new TopicPartition(topic, 0);
        long deadline = System.currentTimeMillis() + 15000;
        try (KafkaConsumer<String, String> rc = consumer("read_committed", null);
             KafkaConsumer<String, String> ru = consumer("read_uncommitted", null)) {
            while (System.currentTimeMillis() < deadline
                    && !rc.endOffsets(List.of(tp)).get(tp).equals(ru.endOffsets(List.of(tp)).get(tp))) {
                Thread.sleep(100);
            }
        }
    }

    /**
     * Long keys and byte[] values (a schema-registry value: a zero byte, a
     * schema id, then bytes that are not UTF-8), with Kafka's own
     * serializers, read back with its deserializers: `[offset, key, hex]`.
     */
    static String binary() throws Exception {
        String t = topic("binary", 1);
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("key.serializer", LongSerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        p.put("delivery.timeout.ms", 15000);
        p.put("request.timeout.ms", 10000);
        p.put("max.block.ms", 20000);
        List<Long> offsets = new ArrayList<>();
        try (KafkaProducer<Long, byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < 4; i++) {
                byte[] value = {0, 0, 0, 0, 7, (byte) 0xc3, 0x28, (byte) 0xff, (byte) i};
                offsets.add(producer.send(new ProducerRecord<>(t, 0, -1L - i, value)).get().offset());
            }
        }
        Properties c = new Properties();
        c.put("bootstrap.servers", boot);
        c.put("enable.auto.commit", "false");
        c.put("key.deserializer", LongDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        TopicPartition tp = new TopicPartition(t, 0);
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<Long, byte[]> consumer = new KafkaConsumer<>(c)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 15000;
            while (out.size() < 4 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<Long, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add("[" + r.offset() + "," + r.key() + "," + q(HexFormat.of().formatHex(r.value())) + "]");
                }
            }
        }
        return "{\"offsets\":" + offsets + ",\"read\":[" + String.join(",", out) + "]}";
    }

    static String transactions() throws Exception {
        String t = topic("txn", 1);
        List<Long> offsets = new ArrayList<>();
        try (KafkaProducer<String, String> p = producer(Map.of("transactional.id", tag + "-jtx"))) {
            p.initTransactions();
            for (String end : List.of("commit", "abort", "commit")) {
                p.beginTransaction();
                for (int i = 0; i < 2; i++) {
                    offsets.add(p.send(new ProducerRecord<>(t, 0, "k" + i, end + i)).get().offset());
                }
                if (end.equals("commit")) p.commitTransaction(); else p.abortTransaction();
            }
        }
        settle(t);
        return "{\"offsets\":" + offsets + ",\"read\":" + both(t) + "}";
    }

    static String zombie() throws Exception {
        String t = topic("zombie", 1);
        String txn = tag + "-jzombie";
        String commit;
        String fresh;
        try (KafkaProducer<String, String> z = producer(Map.of("transactional.id", txn));
             KafkaProducer<String, String> f = producer(Map.of("transactional.id", txn))) {
            z.initTransactions();
            z.beginTransaction();
            z.send(new ProducerRecord<>(t, 0, null, "from-zombie")).get();
            f.initTransactions();
            try {
                z.commitTransaction();
                commit = "committed";
            } catch (Exception e) {
                commit = name(e);
            }
            f.beginTransaction();
            f.send(new ProducerRecord<>(t, 0, null, "from-fresh")).get();
            f.commitTransaction();
            fresh = "committed";
        }
        settle(t);
        return "{\"zombie_commit\":" + q(commit) + ",\"fresh\":" + q(fresh) + ",\"read\":" + both(t) + "}";
    }

    static String idempotent() throws Exception {
        String t = topic("idem", 1);
        List<Long> offsets = new ArrayList<>();
        try (KafkaProducer<String, String> p = producer(Map.of("enable.idempotence", true, "acks", "all"))) {
            List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < 6; i++) sent.add(p.send(new ProducerRecord<>(t, 0, null, "i" + i)));
            for (java.util.concurrent.Future<RecordMetadata> f : sent) offsets.add(f.get().offset());
        }
        return "{\"offsets\":" + offsets + ",\"read\":" + both(t) + "}";
    }

    static String sendOffsets() throws Exception {
        String in = topic("in", 1), out = topic("out", 1);
        String group = tag + "-jworkers";
        try (KafkaProducer<String, String> p = producer(Map.of())) {
            for (int i = 0; i < 4; i++) p.send(new ProducerRecord<>(in, 0, null, "i" + i)).get();
        }
        TopicPartition tp = new TopicPartition(in, 0);
        // No look before the commit: the Java consumer's committed() asks
        // for stable offsets (KIP-447), so it waits for the transaction.
        String after;
        try (KafkaConsumer<String, String> worker = consumer("read_committed", group);
             KafkaProducer<String, String> tx = producer(Map.of("transactional.id", tag + "-jcopy"))) {
            tx.initTransactions();
            tx.beginTransaction();
            tx.send(new ProducerRecord<>(out, 0, null, "copied")).get();
            tx.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(4)), worker.groupMetadata());
            tx.commitTransaction();
        }
        long deadline = System.currentTimeMillis() + 15000;
        do {
            after = committed(group, tp);
        } while (after.equals("null") && System.currentTimeMillis() < deadline);
        settle(out);
        return "{\"committed_after\":" + after
                + ",\"out\":" + read(out, "read_committed") + "}";
    }

    /** The group's committed offset as a read_uncommitted consumer sees it. */
    static String committed(String group, TopicPartition tp) {
        try (KafkaConsumer<String, String> c = consumer("read_uncommitted", group)) {
            OffsetAndMetadata m = c.committed(Set.of(tp), Duration.ofSeconds(10)).get(tp);
            return m == null ? "null" : Long.toString(m.offset());
        }
    }
}
