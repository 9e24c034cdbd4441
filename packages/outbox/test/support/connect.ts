import { pollUntil } from '@outbox-inbox/infra';
import type { ConnectApi } from '../../src/cdc.ts';

/**
 * Pauses the connector and waits until its tasks have paused too: Connect reports the connector
 * PAUSED first, and a task still polling sends what it read. A task reports PAUSED once it has
 * stopped polling, so an insert after this stays in the slot.
 */
export async function pauseConnector(api: ConnectApi, name: string): Promise<void> {
  await api.pause(name);
  await pollUntil(
    async () => {
      const status = await api.status(name);
      return (
        status?.connector.state === 'PAUSED' &&
        status.tasks.length > 0 &&
        status.tasks.every((task) => task.state === 'PAUSED')
      );
    },
    { timeoutMs: 30_000, description: `connector ${name} and its tasks paused` },
  );
}
