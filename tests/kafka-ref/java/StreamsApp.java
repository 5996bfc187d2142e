// A Kafka Streams application (Kafka Streams 4.4) against a cluster:
// a word count with a repartition (groupBy) and a state store (its
// changelog topic compacted), the shape most Streams applications have,
// and beside it a windowed count (one-day windows: a window store, whose
// changelog Streams makes `cleanup.policy=compact,delete`).
// It creates TAG-lines (3 partitions), writes LINES lines of words into
// it, runs the topology with PROCESSING_GUARANTEE (at_least_once or
// exactly_once_v2) until TAG-counts holds every word's final count, and
// prints `count WORD N` for each word (its last count read), `windowed
// WORD N` for each word (its windows' last counts summed), then
// `internal TOPIC CONFIGS` for each topic Streams created, then `done`.
// Exits non-zero (with the reason on stderr) if the counts are not all
// there within 90 s.
//
//   java -cp 'tests/kafka-ref/target/lib/*' StreamsApp.java BOOTSTRAP TAG LINES GUARANTEE
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.kstream.*;

public class StreamsApp {
    static final String[] WORDS = {"kafka", "log", "offset", "replica", "leader", "marker", "epoch"};

    public static void main(String[] args) throws Exception {
        String boot = args[0], tag = args[1], guarantee = args[3];
        int lines = Integer.parseInt(args[2]);
        String in = tag + "-lines", out = tag + "-counts", wout = tag + "-wcounts";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot))) {
            admin.createTopics(List.of(new NewTopic(in, 3, (short) 3), new NewTopic(out, 3, (short) 3),
                            new NewTopic(wout, 3, (short) 3)))
                    .all().get();
        }
        Map<String, Long> expected = new TreeMap<>();
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            Random rng = new Random(lines);
            for (int i = 0; i < lines; i++) {
                StringBuilder line = new StringBuilder();
                for (int w = 0; w < 1 + rng.nextInt(5); w++) {
                    String word = WORDS[rng.nextInt(WORDS.length)];
                    expected.merge(word, 1L, Long::sum);
                    line.append(w == 0 ? "" : " ").append(word);
                }
                producer.send(new ProducerRecord<>(in, "line-" + i, line.toString())).get();
            }
        }

        StreamsBuilder builder = new StreamsBuilder();
        KGroupedStream<String, String> words = builder.stream(in, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(v -> Arrays.asList(v.split(" ")))
                .groupBy((k, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()));
        words.count(Materialized.as("word-counts"))
                .toStream()
                .to(out, Produced.with(Serdes.String(), Serdes.Long()));
        words.windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofDays(1)))
                .count(Materialized.as("windowed-counts"))
                .toStream((w, n) -> w.key() + "@" + w.window().start())
                .to(wout, Produced.with(Serdes.String(), Serdes.Long()));
        Properties s = new Properties();
        s.put(StreamsConfig.APPLICATION_ID_CONFIG, tag + "-wordcount");
        s.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, boot);
        s.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        s.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 3);
        s.put(StreamsConfig.STATE_DIR_CONFIG,
                java.nio.file.Files.createTempDirectory("streams-state").toString());
        s.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        s.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        s.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        KafkaStreams streams = new KafkaStreams(builder.build(), s);
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        streams.setUncaughtExceptionHandler(e -> {
            errors.add(e.toString());
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler
                    .StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();

        Properties c = new Properties();
        c.put("bootstrap.servers", boot);
        c.put("group.id", tag + "-reader");
        c.put("auto.offset.reset", "earliest");
        c.put("isolation.level", "read_committed");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", LongDeserializer.class.getName());
        Map<String, Long> seen = new TreeMap<>();
        Map<String, Long> windows = new TreeMap<>();
        Map<String, Long> windowed = new TreeMap<>();
        long deadline = System.currentTimeMillis() + 90_000;
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(c)) {
            consumer.subscribe(List.of(out, wout));
            while (!(seen.equals(expected) && windowed.equals(expected)) && errors.isEmpty()
                    && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.topic().equals(out)) {
                        seen.put(r.key(), r.value());
                    } else {
                        windows.put(r.key(), r.value());
                        windowed.clear();
                        windows.forEach((k, n) -> windowed.merge(k.substring(0, k.indexOf('@')), n, Long::sum));
                    }
                }
            }
        }
        List<String> internal = new ArrayList<>();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", boot))) {
            for (String t : new TreeSet<>(admin.listTopics().names().get())) {
                if (!t.startsWith(tag + "-wordcount-")) continue;
                Config cfg = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, t)))
                        .all().get().values().iterator().next();
                List<String> set = new ArrayList<>();
                for (ConfigEntry e : cfg.entries()) {
                    if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) set.add(e.name() + "=" + e.value());
                }
                Collections.sort(set);
                internal.add("internal " + t.substring(tag.length() + 1) + " " + String.join(",", set));
            }
        }
        streams.close(Duration.ofSeconds(20));
        for (Map.Entry<String, Long> e : seen.entrySet()) System.out.println("count " + e.getKey() + " " + e.getValue());
        for (Map.Entry<String, Long> e : windowed.entrySet()) System.out.println("windowed " + e.getKey() + " " + e.getValue());
        internal.forEach(System.out::println);
        if (!errors.isEmpty()) {
            System.err.println("the Streams application failed: " + errors);
            System.exit(1);
        }
        if (!seen.equals(expected) || !windowed.equals(expected)) {
            System.err.println("counts " + seen + " and windowed " + windowed + " are not the expected " + expected);
            System.exit(1);
        }
        System.out.println("done");
        System.exit(0);
    }
}
