// Kafka's Java client 4.4, run from source by tests/common/kafka_ref.rs:
// creates TOPIC (six partitions, RF 1) with ten records in each; three
// KafkaConsumers of group GROUP (the classic protocol, ASSIGNOR), one
// thread each, commit each record they read (commitSync). Once they own
// every partition exactly once and read every record it prints
// `split N,N,N` (partition counts, sorted) and `read N`; the third closes
// (LeaveGroup); once the other two own every partition again and read ten
// more records in each, `split N,N` and `read N`; at the end `read twice N`
// (records read twice but those whose commit failed in a rebalance).
//
//   java -cp 'tests/kafka-ref/target/lib/*' GroupSplit.java BOOTSTRAP TOPIC GROUP ASSIGNOR
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class GroupSplit {
    static final int PARTITIONS = 6;
    static final Map<String, Set<Integer>> owned = new ConcurrentHashMap<>();
    static final List<String> reads = Collections.synchronizedList(new ArrayList<>());
    static final Set<String> uncommitted = ConcurrentHashMap.newKeySet();
    static final long started = System.nanoTime();

    /// Progress on standard error, with the seconds since the start: what
    /// the harness shows when the program fails or outlives its bound.
    static void progress(String what) {
        System.err.printf("[%.1f s] %s%n", (System.nanoTime() - started) / 1e9, what);
    }

    static class Member implements Runnable {
        final String name;
        final Properties props;
        final String topic;
        final AtomicBoolean closing = new AtomicBoolean();
        final CountDownLatch closed = new CountDownLatch(1);

        Member(String name, Properties props, String topic) {
            this.name = name;
            this.props = props;
            this.topic = topic;
            owned.put(name, ConcurrentHashMap.newKeySet());
        }

        public void run() {
            try {
                consume();
            } catch (Throwable e) {
                System.err.println(name + " failed:");
                e.printStackTrace();
            }
        }

        void consume() {
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props)) {
                c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    public void onPartitionsRevoked(Collection<TopicPartition> ps) {
                        ps.forEach(tp -> owned.get(name).remove(tp.partition()));
                        progress(name + " revoked " + ps.size());
                    }
                    public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                        ps.forEach(tp -> owned.get(name).add(tp.partition()));
                        progress(name + " assigned " + ps.size());
                    }
                    public void onPartitionsLost(Collection<TopicPartition> ps) {
                        onPartitionsRevoked(ps);
                    }
                });
                while (!closing.get()) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                        reads.add(r.partition() + "@" + r.offset());
                        try {
                            c.commitSync(Map.of(new TopicPartition(topic, r.partition()),
                                    new OffsetAndMetadata(r.offset() + 1)));
                        } catch (org.apache.kafka.common.KafkaException e) {
                            // A commit during a rebalance (the client refuses it
                            // itself while a cooperative rebalance runs): the
                            // record may be read again by its next owner.
                            uncommitted.add(r.partition() + "@" + r.offset());
                            System.err.println(name + " commit failed: " + e);
                        }
                    }
                }
            }
            owned.remove(name);
            closed.countDown();
        }
    }

    static String split(List<String> names) {
        List<Integer> every = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        for (String n : names) {
            Set<Integer> o = owned.getOrDefault(n, Set.of());
            if (o.isEmpty()) return null;
            every.addAll(o);
            sizes.add(o.size());
        }
        Collections.sort(every);
        List<Integer> all = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) all.add(p);
        if (!every.equals(all)) return null;
        Collections.sort(sizes);
        StringJoiner j = new StringJoiner(",");
        sizes.forEach(s -> j.add(String.valueOf(s)));
        return j.toString();
    }

    static void settle(List<String> names, int records) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (split(names) == null || new HashSet<>(reads).size() < records) {
            if (System.currentTimeMillis() > deadline) {
                throw new RuntimeException("no split among " + names + ": " + owned + ", read " + new HashSet<>(reads).size());
            }
            Thread.sleep(50);
        }
        System.out.println("split " + split(names));
        System.out.println("read " + new HashSet<>(reads).size());
        progress("settled: " + owned);
    }

    static void produce(String boot, String topic, int round) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int part = 0; part < PARTITIONS; part++)
                for (int i = 0; i < 10; i++)
                    producer.send(new ProducerRecord<>(topic, part, null, "r" + round + "-" + i)).get();
        }
    }

    static void awaitClosed(Member m) throws Exception {
        if (!m.closed.await(30, TimeUnit.SECONDS))
            throw new RuntimeException(m.name + " did not close within 30 s");
    }

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    static void run(String[] args) throws Exception {
        String boot = args[0], topic = args[1], group = args[2], assignor = args[3];
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot))) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        }
        progress("created " + topic);
        produce(boot, topic, 0);
        progress("produced round 0");
        Properties c = new Properties();
        c.put("bootstrap.servers", boot);
        c.put("group.id", group);
        c.put("group.protocol", "classic");
        c.put("partition.assignment.strategy", assignor);
        c.put("auto.offset.reset", "earliest");
        c.put("enable.auto.commit", "false");
        c.put("session.timeout.ms", "6000");
        c.put("heartbeat.interval.ms", "500");
        c.put("metadata.max.age.ms", "2000");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        Map<String, Member> members = new LinkedHashMap<>();
        // Daemon threads: a member stuck in poll or close must not keep the
        // JVM alive once main has failed and printed why.
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
        for (String name : List.of("a", "b", "c")) {
            Member m = new Member(name, c, topic);
            members.put(name, m);
            pool.submit(m);
        }
        settle(List.of("a", "b", "c"), 60);
        members.get("c").closing.set(true);
        awaitClosed(members.get("c"));
        progress("c closed");
        produce(boot, topic, 1);
        progress("produced round 1");
        settle(List.of("a", "b"), 120);
        for (Member m : members.values()) m.closing.set(true);
        for (Member m : members.values()) awaitClosed(m);
        progress("all closed");
        pool.shutdown();
        Map<String, Integer> count = new HashMap<>();
        synchronized (reads) {
            reads.forEach(r -> count.merge(r, 1, Integer::sum));
        }
        System.out.println("read twice " + count.entrySet().stream()
                .filter(e -> e.getValue() > 1 && !uncommitted.contains(e.getKey())).count());
    }
}
