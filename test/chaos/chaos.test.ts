/**
 * The chaos suite, short (CI): 12 machines through the whole system (runDev) with API faults (409s,
 * 5xx, latency, watch drops and 410s, forced compactions), duplicated and reordered messages and
 * crashes between two writes, then scale to zero; then the same with the functions on emulated
 * Lambda (serverless.yml's event source mappings), and with the vMetal sample's NodeClaims beside the
 * machines on the same hosts (`npm run chaos -- --vmetal`). `npm run chaos` runs the long version (200).
 */
import { describe, expect, it } from 'vitest';
import { type ChaosOptions, type ChaosReport, formatReport, runChaos } from './run.ts';

/** One chaos run, held to what every run must show: all Ready, no violation, nothing leaked or dead-lettered. */
async function chaosRun(o: ChaosOptions): Promise<ChaosReport> {
  const report = await runChaos(o);
  if (!report.ok) console.log(formatReport(report));
  expect(report.violations).toEqual([]);
  expect(report.releaseFindings).toEqual([]);
  expect(report.ready).toBe(o.machines);
  expect(report.deadLettered).toBe(0);
  expect(report.ok).toBe(true);
  // The chaos really happened.
  expect(report.crashes.crashed).toBeGreaterThan(0);
  return report;
}

describe('chaos (12 machines)', () => {
  it('every machine Ready, no host/index/address handed out twice, nothing leaked after scale-down', async () => {
    const report = await chaosRun({ machines: 12, seed: 7, simDelayMs: 20, timeoutSeconds: 70 });
    expect(report.faults['409']).toBeGreaterThan(0);
    expect(report.faults['5xx']).toBeGreaterThan(0);
    expect(report.faults.compactions).toBeGreaterThan(0);
    expect(report.duplicatesSent).toBeGreaterThan(0);
    expect(report.invariantChecks).toBeGreaterThan(0);
  }, 180_000);

  it('the same with the functions on emulated Lambda', async () => {
    const report = await chaosRun({
      machines: 12,
      seed: 7,
      simDelayMs: 20,
      timeoutSeconds: 90,
      lambda: true,
    });
    // The crashed records came back through the event source mappings.
    expect(report.lambda?.failedRecords).toBeGreaterThan(0);
    expect(report.lambda?.invocations).toBeGreaterThan(0);
  }, 240_000);

  it('with the vMetal sample beside them: every claim Available, 0 double-claimed hosts, 0 duplicate addresses over the whole history', async () => {
    const report = await chaosRun({
      machines: 6,
      seed: 11,
      simDelayMs: 20,
      timeoutSeconds: 90,
      vmetal: true,
    });
    expect(report.historyViolations).toEqual([]);
    expect(report.historyEvents).toBeGreaterThan(100);
    expect(report.claimsAvailable).toBe(5);
    expect(report.faults['409']).toBeGreaterThan(0);
  }, 240_000);
});
