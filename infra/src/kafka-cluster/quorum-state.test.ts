import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readQuorumView } from './quorum-state.ts';

describe('readQuorumView', () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });
  const dataDirWith = (quorumState: string | undefined): string => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'quorum-state-'));
    folders.push(dataDir);
    if (quorumState !== undefined) {
      mkdirSync(path.join(dataDir, '__cluster_metadata-0'));
      writeFileSync(path.join(dataDir, '__cluster_metadata-0', 'quorum-state'), quorumState);
    }
    return dataDir;
  };

  it('reads the leader and epoch a voter wrote down', () => {
    const dataDir = dataDirWith(
      '{"leaderId":2,"leaderEpoch":7,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}',
    );
    expect(readQuorumView(dataDir)).toEqual({ leaderId: 2, leaderEpoch: 7 });
  });

  it('has no leader during an election (-1), and no view without the file or mid-rewrite', () => {
    expect(readQuorumView(dataDirWith('{"leaderId":-1,"leaderEpoch":8,"votedId":3}'))).toEqual({
      leaderId: undefined,
      leaderEpoch: 8,
    });
    expect(readQuorumView(dataDirWith(undefined))).toBeUndefined();
    expect(readQuorumView(dataDirWith('{"leaderId":2,"lead'))).toBeUndefined();
  });
});
