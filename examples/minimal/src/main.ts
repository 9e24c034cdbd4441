// node src/main.ts EMAIL...: signs each address up, waits until each is welcomed, then stops.
// DATABASE_URL and KAFKA_BROKERS (comma-separated) say where PostgreSQL and Kafka are.
import { startMinimal } from './minimal.ts';

const { DATABASE_URL: databaseUrl, KAFKA_BROKERS: brokers } = process.env;
const emails = process.argv.slice(2);
if (!databaseUrl || !brokers || emails.length === 0) {
  console.error('usage: DATABASE_URL=postgres://… KAFKA_BROKERS=host:port node src/main.ts EMAIL…');
  process.exit(2);
}
const logger = {
  debug: () => {},
  info: (obj: object, msg?: string) => console.log(msg ?? '', obj),
  warn: (obj: object, msg?: string) => console.warn(msg ?? '', obj),
  error: (obj: object, msg?: string) => console.error(msg ?? '', obj),
};
const service = await startMinimal({ databaseUrl, brokers: brokers.split(','), logger });
const started = Date.now();
const ids = await Promise.all(emails.map((email) => service.signUp(email)));
const deadline = started + 30_000;
let waiting = ids.length;
while (waiting > 0 && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  const welcomed = await service.db
    .selectFrom('signups')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('id', 'in', ids)
    .where('welcomes', '>', 0)
    .executeTakeFirstOrThrow();
  waiting = ids.length - Number(welcomed.n);
}
console.log(`${ids.length - waiting} of ${ids.length} welcomed in ${Date.now() - started} ms`);
await service.stop();
process.exitCode = waiting === 0 ? 0 : 1;
