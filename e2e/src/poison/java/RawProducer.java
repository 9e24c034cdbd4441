import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Produces records byte for byte with Kafka's own Java client, so the poison corpus does not
 * come from the same JavaScript client the services consume with. One record per stdin line:
 * topic, key, value and headers separated by tabs; key and value in base64, "-" for null;
 * headers as name:value pairs (both base64) separated by commas. Each record is sent alone and
 * acknowledged by all in-sync replicas before the next; stdout gets "partition<TAB>offset" per
 * record, in order.
 */
public class RawProducer {
  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: RawProducer <bootstrap servers>");
      System.exit(2);
    }
    Properties config = new Properties();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    config.put(ProducerConfig.CLIENT_ID_CONFIG, "e2e-poison-java");
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    // The broker decides what is too large, not this client.
    config.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(16 * 1024 * 1024));
    Base64.Decoder base64 = Base64.getDecoder();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config);
        BufferedReader lines =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII))) {
      String line;
      while ((line = lines.readLine()) != null) {
        if (line.isEmpty()) continue;
        String[] fields = line.split("\t", -1);
        if (fields.length != 4) throw new IllegalArgumentException("expected 4 fields: " + line);
        List<Header> headers = new ArrayList<>();
        if (!fields[3].isEmpty()) {
          for (String pair : fields[3].split(",")) {
            String[] nameAndValue = pair.split(":", -1);
            String name = new String(base64.decode(nameAndValue[0]), StandardCharsets.UTF_8);
            headers.add(new RecordHeader(name, base64.decode(nameAndValue[1])));
          }
        }
        byte[] key = fields[1].equals("-") ? null : base64.decode(fields[1]);
        byte[] value = fields[2].equals("-") ? null : base64.decode(fields[2]);
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(fields[0], null, key, value, headers);
        RecordMetadata landed = producer.send(record).get();
        System.out.println(landed.partition() + "\t" + landed.offset());
        System.out.flush();
      }
    }
  }
}
