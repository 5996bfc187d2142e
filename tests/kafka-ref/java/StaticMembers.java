// Static membership (KIP-345) through Kafka's Java client 4.4, run from
// source by tests/common/kafka_ref.rs against serve or Apache Kafka 4.4:
// creates TOPIC (four partitions, RF 1) with ten records in each; two
// KafkaConsumers of group GROUP (classic protocol, RangeAssignor), static
// members `inst-a` (the first, so the group's leader) and `inst-b`, each
// in its own thread, commit each record they read.
//
// Then, printing a line for each step:
// 1. both own two partitions and read all 40: `split 2,2`, `read 40`;
// 2. a (the leader) closes, which a static member does without leaving
//    the group, and a new consumer with a's instance id starts while b
//    goes on: it is given a's partitions back with no rebalance (b's
//    generation unchanged, none of b's partitions revoked): `restarted a:
//    same partitions, generation same, b revoked 0`, `read 80`;
// 3. a third consumer with a's instance id starts while the second runs:
//    the second is fenced (FencedInstanceIdException), the third takes
//    its place: `a fenced`, `read 120`;
// 4. b closes and the admin removes instance `inst-b` from the group
//    (removeMembersFromConsumerGroup, a LeaveGroup by instance id): a owns
//    all four partitions: `removed inst-b`, `split 4`, `read 160`;
// 5. `read twice N`: records read more than once.
// Exits non-zero (with the reason on standard error) if a step does not
// happen within 60 s.
//
//   java -cp 'tests/kafka-ref/target/lib/*' StaticMembers.java BOOTSTRAP TOPIC GROUP
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.serialization.*;

public class StaticMembers {
    static final int PARTITIONS = 4;
    static final List<String> reads = Collections.synchronizedList(new ArrayList<>());
    static final long started = System.nanoTime();

    static void progress(String what) {
        System.err.printf("[%.1f s] %s%n", (System.nanoTime() - started) / 1e9, what);
    }

    /// One consumer process: its partitions, revocations and generation
    /// as its own thread last saw them.
    static class Member implements Runnable {
        final String name;
        final Properties props;
        final String topic;
        final Set<Integer> owned = ConcurrentHashMap.newKeySet();
        final AtomicInteger revoked = new AtomicInteger();
        final AtomicInteger generation = new AtomicInteger(-1);
        final AtomicBoolean closing = new AtomicBoolean();
        final AtomicBoolean fenced = new AtomicBoolean();
        final CountDownLatch closed = new CountDownLatch(1);

        Member(String name, String instance, Properties common, String topic) {
            this.name = name;
            this.props = new Properties();
            this.props.putAll(common);
            this.props.put("group.instance.id", instance);
            this.props.put("client.id", name);
            this.topic = topic;
        }

        public void run() {
            try {
                consume();
            } catch (FencedInstanceIdException e) {
                progress(name + " fenced: " + e.getMessage());
                fenced.set(true);
            } catch (Throwable e) {
                System.err.println(name + " failed:");
                e.printStackTrace();
            } finally {
                owned.clear();
                closed.countDown();
            }
        }

        void consume() {
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props)) {
                c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    public void onPartitionsRevoked(Collection<TopicPartition> ps) {
                        if (!ps.isEmpty() && !closing.get()) revoked.incrementAndGet();
                        ps.forEach(tp -> owned.remove(tp.partition()));
                        progress(name + " revoked " + ps);
                    }
                    public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                        ps.forEach(tp -> owned.add(tp.partition()));
                        progress(name + " assigned " + ps);
                    }
                    public void onPartitionsLost(Collection<TopicPartition> ps) {
                        onPartitionsRevoked(ps);
                    }
                });
                while (!closing.get()) {
                    ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(100));
                    generation.set(c.groupMetadata().generationId());
                    for (ConsumerRecord<String, String> r : records) {
                        reads.add(r.partition() + "@" + r.offset());
                        c.commitSync(Map.of(new TopicPartition(topic, r.partition()),
                                new OffsetAndMetadata(r.offset() + 1)));
                    }
                }
            }
        }
    }

    static String split(List<Member> members) {
        List<Integer> every = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        for (Member m : members) {
            if (m.owned.isEmpty()) return null;
            every.addAll(m.owned);
            sizes.add(m.owned.size());
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

    static void await(String what, Callable<Boolean> done) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (!done.call()) {
            if (System.currentTimeMillis() > deadline)
                throw new RuntimeException("not within 60 s: " + what);
            Thread.sleep(50);
        }
        progress(what);
    }

    static int distinctReads() {
        synchronized (reads) {
            return new HashSet<>(reads).size();
        }
    }

    static void settle(List<Member> members, int records) throws Exception {
        await("split among " + members.size() + ", read " + records,
                () -> split(members) != null && distinctReads() >= records);
        System.out.println("split " + split(members));
        System.out.println("read " + distinctReads());
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
        progress("produced round " + round);
    }

    static void close(Member m) throws Exception {
        m.closing.set(true);
        if (!m.closed.await(30, TimeUnit.SECONDS))
            throw new RuntimeException(m.name + " did not close within 30 s");
        progress(m.name + " closed");
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
        String boot = args[0], topic = args[1], group = args[2];
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot))) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        }
        produce(boot, topic, 0);
        Properties c = new Properties();
        c.put("bootstrap.servers", boot);
        c.put("group.id", group);
        c.put("group.protocol", "classic");
        c.put("partition.assignment.strategy", RangeAssignor.class.getName());
        c.put("auto.offset.reset", "earliest");
        c.put("enable.auto.commit", "false");
        // Long enough that no session runs out between a close and the
        // restart: what static membership is for.
        c.put("session.timeout.ms", "30000");
        c.put("heartbeat.interval.ms", "500");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });

        // 1. a alone first (it leads), then b.
        Member a = new Member("a", "inst-a", c, topic);
        pool.submit(a);
        await("a owns every partition", () -> a.owned.size() == PARTITIONS);
        Member b = new Member("b", "inst-b", c, topic);
        pool.submit(b);
        settle(List.of(a, b), 40);
        await("both in one generation",
                () -> b.generation.get() > 0 && b.generation.get() == a.generation.get());
        Set<Integer> aOwned = new TreeSet<>(a.owned);
        int bGeneration = b.generation.get();
        int bRevoked = b.revoked.get();

        // 2. a closes (no LeaveGroup) and starts again.
        close(a);
        produce(boot, topic, 1);
        Member a2 = new Member("a2", "inst-a", c, topic);
        pool.submit(a2);
        await("a2 reads round 1", () -> distinctReads() >= 80 && !a2.owned.isEmpty());
        System.out.println("restarted a: "
                + (new TreeSet<>(a2.owned).equals(aOwned) ? "same partitions" : "partitions " + a2.owned + " not " + aOwned)
                + ", generation " + (b.generation.get() == bGeneration ? "same" : bGeneration + " then " + b.generation.get())
                + ", b revoked " + (b.revoked.get() - bRevoked));
        System.out.println("read " + distinctReads());

        // 3. A second process with a's instance id while a2 runs.
        Member a3 = new Member("a3", "inst-a", c, topic);
        pool.submit(a3);
        await("a2 fenced", () -> a2.fenced.get());
        System.out.println("a fenced");
        produce(boot, topic, 2);
        await("a3 reads round 2", () -> distinctReads() >= 120 && !a3.owned.isEmpty());
        System.out.println("read " + distinctReads());

        // 4. b closes, and the admin removes its instance.
        close(b);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot))) {
            admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions(
                    List.of(new MemberToRemove("inst-b")))).all().get();
        }
        System.out.println("removed inst-b");
        produce(boot, topic, 3);
        settle(List.of(a3), 160);
        close(a3);
        pool.shutdown();

        Map<String, Integer> count = new HashMap<>();
        synchronized (reads) {
            reads.forEach(r -> count.merge(r, 1, Integer::sum));
        }
        System.out.println("read twice " + count.values().stream().filter(n -> n > 1).count());
    }
}
