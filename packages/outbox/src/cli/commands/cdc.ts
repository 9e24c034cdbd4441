import { replicationName } from '../../cdc/cdc-connector-config.ts';
import { removeCdcRelay } from '../../cdc/cdc-relay.ts';
import { silentLogger } from '../../logger.ts';
import { UsageError } from '../args.ts';
import { noPositionals, EXIT, type Subcommand } from '../command.ts';

/**
 * `cdc remove`: what a service that goes back to the polling relay (or goes away) must do, or its
 * slot keeps the WAL for ever. The relay role in CDC mode registers the connector again while it
 * runs: stop that role first.
 */
export const cdcRemove: Subcommand = {
  usage: 'cdc remove --connector NAME --yes [--json]   (with CONNECT_URL: Kafka Connect)',
  options: { connector: 'string', yes: 'boolean', json: 'boolean' },
  destructive: true,
  async run(context, args) {
    noPositionals(args);
    const name = args.strings.get('connector');
    if (name === undefined || name === '') {
      throw new UsageError(
        "--connector is required: the connector's name in Kafka Connect (<KAFKA_CLIENT_ID>-outbox)",
      );
    }
    const connectUrl = context.connectUrl();
    await removeCdcRelay({
      db: context.db(),
      connectUrl,
      connector: { name },
      logger: silentLogger,
    });
    const slot = replicationName(name);
    if (args.flags.has('json')) context.io.out(JSON.stringify({ removed: name, slot }));
    else context.io.out(`removed connector ${name}, its offsets, and slot and publication ${slot}`);
    return EXIT.ok;
  },
};
