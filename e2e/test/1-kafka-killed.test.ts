import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('Kafka SIGKILLed mid-flight: the API keeps answering 201, the backlog grows, then drains', async () => {
  let acceptedWhileDown = 0;
  const result = await runScenario('1 kafka killed', {
    inject: async ({ system, acceptedSoFar, fault }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      await system.stack.kill('kafka');
      fault('kafka SIGKILL');
      const atKill = acceptedSoFar();
      // Down for several seconds, measured in orders the API accepted meanwhile.
      await pollUntil(() => acceptedSoFar() >= atKill + defaultRate * 5, {
        timeoutMs: 60_000,
        description: 'orders while Kafka is down',
      });
      acceptedWhileDown = acceptedSoFar() - atKill;
      await system.stack.start('kafka');
      fault('kafka restarted');
      const atRestart = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atRestart + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
    },
  });

  expect(result.invariants.violations).toEqual([]);
  expect(result.load.refused).toBe(0);
  expect(acceptedWhileDown).toBeGreaterThanOrEqual(defaultRate * 5);
  // The events of the orders accepted while Kafka was down waited in the outbox.
  expect(result.counts.largestBacklog).toBeGreaterThanOrEqual(defaultRate * 4);
});
