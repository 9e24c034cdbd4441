package dev.outboxinbox.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * Runs after Debezium's outbox EventRouter and gives each message the headers the polling relay
 * gives it (packages/outbox/src/relay/kafka-message.ts), so a consumer cannot tell which relay
 * published an event:
 *
 * <ul>
 *   <li>the row's own {@code headers} (a JSON object the router placed as one header) become
 *       one header each, first;
 *   <li>then the standard headers, in the relay's order, each winning over a row header of the
 *       same name;
 *   <li>{@code occurred_at} is written as JavaScript's {@code toISOString()} writes it
 *       (milliseconds, always three digits, UTC), not as Debezium's timestamp with microseconds;
 *   <li>the router's own {@code id} header, which the relay does not send, is dropped.
 * </ul>
 */
public class OutboxHeaders<R extends ConnectRecord<R>> implements Transformation<R> {
  /** The header the router places the row's {@code headers} column in. */
  public static final String ROW_HEADERS = "outbox_row_headers";

  private static final List<String> STANDARD =
      List.of("event_id", "event_type", "aggregate_type", "aggregate_id", "occurred_at");
  private static final DateTimeFormatter JS_ISO =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
  private static final ObjectMapper JSON = new ObjectMapper();

  @Override
  public R apply(R record) {
    if (record.value() == null) return record;
    Headers in = record.headers();
    Headers out = new ConnectHeaders();
    Header rowHeaders = in.lastWithName(ROW_HEADERS);
    if (rowHeaders != null && rowHeaders.value() != null) {
      for (Map.Entry<String, String> entry : parseObject(rowHeaders.value().toString())) {
        if (!STANDARD.contains(entry.getKey())) out.addString(entry.getKey(), entry.getValue());
      }
    }
    for (String name : STANDARD) {
      Header header = in.lastWithName(name);
      if (header == null || header.value() == null) continue;
      String value = header.value().toString();
      out.addString(name, name.equals("occurred_at") ? asJavaScriptIso(value) : value);
    }
    return record.newRecord(
        record.topic(),
        record.kafkaPartition(),
        record.keySchema(),
        record.key(),
        record.valueSchema(),
        record.value(),
        record.timestamp(),
        out);
  }

  private static Iterable<Map.Entry<String, String>> parseObject(String json) {
    JsonNode node;
    try {
      node = JSON.readTree(json);
    } catch (Exception error) {
      throw new DataException("outbox row headers are not JSON: " + json, error);
    }
    if (!node.isObject()) throw new DataException("outbox row headers are not a JSON object");
    List<Map.Entry<String, String>> entries = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> field = it.next();
      JsonNode value = field.getValue();
      entries.add(Map.entry(field.getKey(), value.isTextual() ? value.asText() : value.toString()));
    }
    return entries;
  }

  /** node-postgres truncates a timestamptz to milliseconds; so does this. */
  static String asJavaScriptIso(String debeziumTimestamp) {
    return JS_ISO.format(Instant.parse(debeziumTimestamp).truncatedTo(ChronoUnit.MILLIS));
  }

  @Override
  public ConfigDef config() {
    return new ConfigDef();
  }

  @Override
  public void configure(Map<String, ?> configs) {}

  @Override
  public void close() {}
}
