import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import {
  commitToOutcomeMs,
  databaseNow,
  ordersCarried,
  ordersInPipeline,
  percentile,
} from '../src/overload/pipeline-clock.ts';
import { apiAnswerTimes } from '../src/overload/api-answer-times.ts';
import { defaultRate, runScenario, traffic } from '../src/scenario.ts';

/** Orders offered per second during the overload: far above what two shared cores carry. */
const overloadRate = 1500;
const overloadSeconds = 20;
/**
 * Keep-alive connections the clients hold to the api (the load generator's `connections`), and
 * the most requests under way: a refusal takes a millisecond, so a few hundred carry the whole
 * overload. More than the api admits, running and waiting (order-service: 32 + 32), or it never
 * has to refuse: with 64 a fast machine's api accepted 291/s of 291/s answered, the clients
 * being the bound. A try never waits in the client for a connection: an open-loop client that
 * queues behind its own pool measures that queue (at 1,500 under way and 256 connections,
 * seconds of it on a busy machine), not the api.
 */
const overloadConnections = 256;
/** The api's documented answer bound (services/order-service/README.md, API_ANSWER_WITHIN_MS). */
const answerBoundMs = 1000;
/**
 * The shares of answers the api may give after the bound, and after 2.5 s, by its own clock, on
 * a machine the suite shares beyond its cores. See the assertion for why not none.
 */
const apiLateShare = 0.02;
const apiVeryLateShare = 0.001;
/** The normal phase's latency target, commit → PAID (B7's). */
const paidP99TargetMs = 2000;
/** How long the normal phase is measured, before the overload and once its backlog drained. */
const measuredSeconds = 15;
/**
 * Orders committed this close before the overload began are left out of the baseline: the
 * overload slows their way to PAID, and they would raise the bound they set.
 */
const baselineMarginMs = 3000;

it('more offered than the api accepts, for 20 s: answered within 1 s (98 in 100 by the api’s clock, and 999 in 1,000 within 2.5 s; the median by the clients’), goodput holds, nothing accepted is lost, and latency is back once the backlog drained', async () => {
  let capacity = 0;
  let acceptedRate = 0;
  let answeredRate = 0;
  let recoveredBy = 0;
  let measuredUntil = 0;
  let baselineFrom = 0;
  let baselineTo = 0;
  let apiOverBound = 0;
  let apiVeryLate = 0;
  let apiAnswered = 0;
  const result = await runScenario('24 overload', {
    // A 503 is final (unless an earlier try of the same key got no answer): the invariants
    // then show that a refused order wrote nothing.
    unavailableIsFinal: true,
    // Open loop up to the connections: what is due beyond them is dropped, not queued.
    maxInFlight: overloadConnections,
    // Clients reach an api through a pool of connections, as a proxy or an http agent does.
    connections: overloadConnections,
    inject: async ({ system, setRate, acceptedSoFar, statusesSoFar, fault, note }) => {
      const orders = system.orderDb;
      const answered = () => Object.values(statusesSoFar()).reduce((sum, n) => sum + n, 0);
      baselineFrom = await databaseNow(orders);
      await traffic({ acceptedSoFar }, measuredSeconds, 'the normal phase before the overload');
      const acceptedBefore = acceptedSoFar();
      const answeredBefore = answered();
      const from = await databaseNow(orders);
      baselineTo = from - baselineMarginMs;
      setRate(overloadRate);
      fault(`${overloadRate} orders/s offered for ${overloadSeconds} s`);
      const started = Date.now();
      await pollUntil(() => Date.now() - started >= overloadSeconds * 1000, {
        timeoutMs: (overloadSeconds + 5) * 1000,
        intervalMs: 250,
        description: 'the overload phase',
      });
      setRate(defaultRate);
      const to = await databaseNow(orders);
      const api = await apiAnswerTimes(system.orderUrl);
      apiOverBound = api.over(answerBoundMs / 1000);
      apiAnswered = api.answered;
      apiVeryLate = api.over(2.5);
      note(
        `api's own clock: ${apiOverBound} of ${api.answered} POST /orders over 1 s (${api.over(1, 201)} of them 201, ${api.over(1, 503)} 503), ${apiVeryLate} over 2.5 s; refused at the start deadline ${api.refused('start-deadline')}, at the answer deadline ${api.refused('answer-deadline')}`,
      );
      const seconds = (to - from) / 1000;
      // What the pipeline carried while overloaded: the capacity of this machine, this run.
      capacity = (await ordersCarried(orders, from, to)) / seconds;
      acceptedRate = (acceptedSoFar() - acceptedBefore) / seconds;
      // What the api was really offered: the tries it answered (the client may fall short).
      answeredRate = (answered() - answeredBefore) / seconds;
      const backlog = await ordersInPipeline(orders);
      fault(`back to ${defaultRate} orders/s`);
      recoveredBy = to + (backlog / Math.max(capacity, 1) + 10) * 1000;
      measuredUntil = recoveredBy + measuredSeconds * 1000;
      note(
        `capacity ${capacity.toFixed(0)} orders/s, accepted ${acceptedRate.toFixed(0)}/s of ${answeredRate.toFixed(0)}/s answered (${overloadRate}/s offered), backlog ${backlog}: latency due back within ${((recoveredBy - to) / 1000).toFixed(1)} s`,
      );
      await pollUntil(async () => (await databaseNow(orders)) >= recoveredBy, {
        timeoutMs: recoveredBy - to + 30_000,
        intervalMs: 500,
        description: 'the drain bound',
      });
      // What was still in the pipeline then, for the reader of a failed run: a backlog that
      // had not drained explains a slow window; none means latency itself stayed up.
      note(`${await ordersInPipeline(orders)} orders in the pipeline at the drain bound`);
      await pollUntil(async () => (await databaseNow(orders)) >= measuredUntil, {
        timeoutMs: measuredUntil - recoveredBy + 30_000,
        intervalMs: 500,
        description: 'the normal phase past the drain bound',
      });
    },
    checkSettled: async (system) => {
      const before = await commitToOutcomeMs(system.orderDb, baselineFrom, baselineTo);
      const after = await commitToOutcomeMs(system.orderDb, recoveredBy, measuredUntil);
      const [p50Before, p99Before, p50After, p99After] = [
        percentile(before, 50),
        percentile(before, 99),
        percentile(after, 50),
        percentile(after, 99),
      ];
      // "Back to normal" is the latency this run had before the overload, on this machine
      // beside whatever else it runs: a stage that shares the two cores can hold a p99 of a few
      // hundred orders over B7's 2 s for a whole run (a fresh-clone run saw 2,463 ms after
      // the drain). Within twice the baseline, or B7's target where that is larger, still
      // fails by far what issue 35 saw: p50 12 s and p99 26 s long after the overload ended.
      const p99Bound = Math.max(paidP99TargetMs, 2 * p99Before);
      console.log(
        `[24 overload] commit → PAID before the overload: p50 ${p50Before.toFixed(0)} ms, p99 ${p99Before.toFixed(0)} ms (${before.length} orders); once the backlog drained: p50 ${p50After.toFixed(0)} ms, p99 ${p99After.toFixed(0)} ms (${after.length} orders), bound ${p99Bound.toFixed(0)} ms`,
      );
      const minimum = defaultRate * measuredSeconds * 0.5;
      return [
        ...(before.length < minimum
          ? [`only ${before.length} orders in the measured window before the overload`]
          : []),
        ...(after.length < minimum
          ? [`only ${after.length} orders in the normal phase's measured window`]
          : []),
        ...(!(p99After <= p99Bound)
          ? [
              `normal phase commit → PAID p99 ${p99After.toFixed(0)} ms once the backlog drained, over ${p99Bound.toFixed(0)} ms (before the overload: p99 ${p99Before.toFixed(0)} ms)`,
            ]
          : []),
      ];
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.unexpectedRestarts).toEqual([]);
  // The overload was one: the api refused a good part of what it answered. "Offered" is what it
  // answered: the test process sends every request on the same two cores as the system, so it
  // falls short of the 1500/s it schedules. Quiet, it answered 5.6-7.9 × what it accepted; in a
  // fresh-clone run beside another stage, 114/s answered of 79/s accepted (1.44 ×). 1.2 × is
  // a sixth of the answers refused: an api that was never at capacity refuses none.
  expect(answeredRate, 'requests answered per second during the overload').toBeGreaterThanOrEqual(
    1.2 * acceptedRate,
  );
  expect(result.load.statusCounts['503'] ?? 0).toBeGreaterThan(0);
  const answers = result.load.createAnswerMs;
  const overBound = answers.filter((ms) => ms >= answerBoundMs).length;
  const seen = `${overBound} of ${answers.length} tries over ${answerBoundMs} ms; p50 ${percentile(answers, 50).toFixed(0)} ms, p99 ${percentile(answers, 99).toFixed(0)} ms, slowest ${Math.max(...answers).toFixed(0)} ms`;
  const queued = percentile(result.load.createQueuedMs, 50).toFixed(0);
  console.log(
    `[24 overload] by the clients' clock, from connection to answer: ${seen} (p50 ${queued} ms waiting for a connection first)`,
  );
  // The design bounds an answer to 1 s: a request that cannot start within 300 ms, or finds as
  // many waiting as run, is refused, and a group that could not send its COMMIT 250 ms before
  // the bound rolls back and is refused too. What no design bounds is a process that gets no
  // CPU: the suite's other stage, the load generator and the whole pipeline share two cores
  // here. On this machine with nothing beside it, none of 26,067 answers came after 1 s by the
  // api's clock, none of 12,675 with two processes spinning beside it, 4 of 23,631 beside
  // scenario 3; a fresh-clone run beside the mutations' own scenarios, with the pipeline
  // carrying 75 orders/s, 64 of 10,009 (0.64 %), none after 2.5 s. Before the answer deadline,
  // such runs saw 1-3.3 % after 1 s and up to 0.3 % after 2.5 s (bench/analysis.md,
  // "Overload"); an api without admission held its requests a median of 17-35 s.
  expect(
    apiOverBound,
    `POST /orders over ${answerBoundMs} ms by the api's own clock, of ${apiAnswered} (${seen})`,
  ).toBeLessThanOrEqual(apiLateShare * apiAnswered);
  expect(
    apiVeryLate,
    `POST /orders over 2.5 s by the api's own clock, of ${apiAnswered} (${seen})`,
  ).toBeLessThanOrEqual(apiVeryLateShare * apiAnswered);
  // By the clients' clock an answer also waits for the api's event loop to read it and for
  // this process to read the answer: a request held like before would still show here.
  expect(percentile(answers, 50), seen).toBeLessThan(answerBoundMs);
  // Goodput held: the api accepted what the pipeline carried meanwhile. When the api is the
  // narrowest stage the two are equal but for the orders accepted just before the window (the
  // normal rate's, under a second of them) and the api's share of a starved machine: beside
  // another stage it accepted 79/s while the pipeline carried 87/s (0.91). An api whose goodput
  // collapses under overload accepted 119/s of a 169/s capacity (0.70, issue 35's measure).
  expect(acceptedRate).toBeGreaterThanOrEqual(0.8 * capacity);
});
