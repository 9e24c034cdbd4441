import { readFileSync } from 'node:fs';
import path from 'node:path';

/** What one KRaft voter last wrote down about its quorum: the leader it follows, and its epoch. */
export interface QuorumView {
  /** The leader's node id; undefined while it knows none (an election, or just started). */
  readonly leaderId: number | undefined;
  readonly leaderEpoch: number;
}

/**
 * Reads a node's view of the controller quorum from its data folder. KRaft persists it in
 * `__cluster_metadata-0/quorum-state` (JSON) whenever its election state changes; a folder
 * not formatted yet, or a file mid-rewrite, has no view.
 */
export function readQuorumView(dataDir: string): QuorumView | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(dataDir, '__cluster_metadata-0', 'quorum-state'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const state = JSON.parse(text) as { leaderId?: unknown; leaderEpoch?: unknown };
    if (typeof state.leaderEpoch !== 'number') return undefined;
    const leaderId =
      typeof state.leaderId === 'number' && state.leaderId >= 0 ? state.leaderId : undefined;
    return { leaderId, leaderEpoch: state.leaderEpoch };
  } catch {
    return undefined;
  }
}
