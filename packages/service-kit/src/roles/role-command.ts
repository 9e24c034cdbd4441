/**
 * V8 flags for every role process. Node 24's V8 lets the young generation grow to 128 MiB
 * under a high allocation rate: a relay draining a backlog went from 130 MiB resident at rest
 * to 315-330 MiB, although its live heap stayed under 90 MiB. With 8 MiB semi-spaces it
 * peaked at 214 MiB at the same drain rate (300k events, within the run-to-run spread).
 */
export const ROLE_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=8']);

/** Arguments for `node` that run one role of a service: `<flags> <main> --roles <role>`. */
export function roleArgs(mainPath: string, role: string): string[] {
  return [...ROLE_NODE_FLAGS, mainPath, '--roles', role];
}
