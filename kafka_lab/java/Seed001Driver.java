// The lab's transactional producer for seed 001 (kafka_lab/seed001.py): Kafka's own Java client of the
// release under test, compiled with `javac --release 8` against that release's kafka-clients jar.
//   aborted-then-committed <bootstrap> <topic> <txn id> <records> <bytes each>
//       one aborted transaction of <records> keyed records, then one committed of as many (KAFKA-6854)
//   offset-commits <bootstrap> <topic> <txn id> <group> <transactions>
//       <transactions> x begin / send / sendOffsetsToTransaction / commit (KAFKA-8335)
import java.util.Collections;
import java.util.Properties;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class Seed001Driver {
    public static void main(String[] args) throws Exception {
        String mode = args[0], bootstrap = args[1], topic = args[2], txn = args[3];
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", txn);
        p.put("enable.idempotence", "true");
        p.put("acks", "all");
        p.put("retry.backoff.ms", "10");
        p.put("linger.ms", "0");
        p.put("max.request.size", "1048576");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            if (mode.equals("aborted-then-committed")) {
                int records = Integer.parseInt(args[4]), size = Integer.parseInt(args[5]);
                for (int round = 0; round < 2; round++) {
                    producer.beginTransaction();
                    for (int i = 0; i < records; i++) {
                        byte[] value = new byte[size];
                        java.util.Arrays.fill(value, (byte) ('a' + round));
                        producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes("UTF-8"), value)).get();
                    }
                    if (round == 0) producer.abortTransaction(); else producer.commitTransaction();
                }
            } else if (mode.equals("offset-commits")) {
                String group = args[4];
                int n = Integer.parseInt(args[5]);
                TopicPartition tp = new TopicPartition(topic, 0);
                for (int i = 0; i < n; i++) {
                    producer.beginTransaction();
                    producer.send(new ProducerRecord<>(topic, ("k" + (i % 10)).getBytes("UTF-8"),
                            ("v" + i).getBytes("UTF-8")));
                    producer.sendOffsetsToTransaction(
                            Collections.singletonMap(tp, new OffsetAndMetadata(i)), group);
                    producer.commitTransaction();
                }
            } else {
                throw new IllegalArgumentException("unknown mode " + mode);
            }
        }
        System.out.println("done " + mode);
    }
}
