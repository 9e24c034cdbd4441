import type { SystemSnapshot } from './snapshot.ts';

/**
 * Each service's retention role ran during the scenario and completed its runs: the other
 * invariants held with it deleting, not because it never got to work.
 */
export function checkRetention(snapshot: SystemSnapshot): string[] {
  if (snapshot.retentionRuns.length === 0) return ['no retention role ran'];
  return snapshot.retentionRuns
    .filter((runs) => !(runs.completed !== undefined && runs.completed > 0))
    .map((runs) =>
      runs.completed === undefined
        ? `${runs.service}: the retention role did not answer on /metrics`
        : `${runs.service}: the retention role completed no run`,
    );
}
