import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { armFault, disarmFault } from './arming.ts';
import { faultHooks } from './fault-hooks.ts';
import { faultsOfRole, formatFaultPlan, parseFaultPlan } from './fault-plan.ts';
import { describeInjectedFaults } from './injected-faults.ts';

describe('fault plans', () => {
  it('travel to a role process as text and back', () => {
    const plan = { 'relay-after-publish': 0.1 };
    expect(parseFaultPlan(formatFaultPlan(plan))).toEqual(plan);
    expect(parseFaultPlan(undefined)).toEqual({});
  });

  it('arm a kill point only in the processes of its role', () => {
    const plan = { 'relay-after-publish': 0.05 };
    expect(faultsOfRole(plan, 'relay')).toEqual(plan);
    expect(faultsOfRole(plan, 'consumer')).toEqual({});
    expect(faultsOfRole({ 'relay-after-publish': 0 }, 'relay')).toEqual({});
  });

  it('arm a service-specific kill point only in that service', () => {
    const plan = { 'dedup-after-apply': 0.1, 'inbox-before-store': 0.2 };
    expect(faultsOfRole(plan, 'consumer', 'order-service')).toEqual({ 'dedup-after-apply': 0.1 });
    expect(faultsOfRole(plan, 'consumer', 'payment-service')).toEqual({
      'inbox-before-store': 0.2,
    });
  });

  it('carry a limit of deaths per kill point', () => {
    const plan = { 'dedup-after-apply': { chance: 0.05, times: 2 } };
    expect(formatFaultPlan(plan)).toBe('dedup-after-apply=0.05x2');
    expect(parseFaultPlan(formatFaultPlan(plan))).toEqual(plan);
    expect(() => parseFaultPlan('dedup-after-apply=0.05x0')).toThrow(/whole number of deaths/);
  });

  it('refuse an unknown kill point or a chance outside 0..1', () => {
    expect(() => parseFaultPlan('relay-after-send=0.1')).toThrow(/unknown kill point/);
    expect(() => parseFaultPlan('relay-after-publish=2')).toThrow(/chance from 0 to 1/);
    expect(() => parseFaultPlan('relay-after-publish')).toThrow(/chance from 0 to 1/);
  });

  it('name each injected death as injected in the report', () => {
    const death = { component: 'order-relay', point: 'relay-after-publish', at: 0 } as const;
    expect(
      describeInjectedFaults([death, death, { ...death, component: 'payment-relay' }]),
    ).toEqual([
      'order-relay self-kill after publish (injected) 2x',
      'payment-relay self-kill after publish (injected) 1x',
    ]);
  });

  it('hang an armed point only in the armed component, and only while it is armed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'e2e-arming-'));
    try {
      const logFile = path.join(dir, 'injected-faults.jsonl');
      const hooksOf = (component: string) =>
        faultHooks({ 'processor-hang': 1 }, { component, logFile }).inboxProcessor;
      const event = {} as Parameters<
        NonNullable<NonNullable<ReturnType<typeof hooksOf>>['beforeHandler']>
      >[0];
      const armed = hooksOf('payment-processor-1');
      const other = hooksOf('payment-processor-2');
      expect(armed?.beforeHandler?.(event)).toBeUndefined();
      armFault(logFile, 'processor-hang', 'payment-processor-1');
      const hung = armed?.beforeHandler?.(event);
      expect(hung).toBeInstanceOf(Promise);
      const settled = await Promise.race([hung?.then(() => true), Promise.resolve(false)]);
      expect(settled).toBe(false);
      expect(other?.beforeHandler?.(event)).toBeUndefined();
      disarmFault(logFile, 'processor-hang', 'payment-processor-1');
      expect(armed?.beforeHandler?.(event)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
