/**
 * The figures the issue names, each under its top-level name, and the check that a full run has
 * every one of them as a finite number (pure, so the failure path is tested without running a
 * benchmark).
 */

/** Aliases of what the benches report in their own words (the bench's own name stays too). */
export const HEADLINE_ALIASES: Readonly<Record<string, string>> = {
  relayVsRawSqsRatio: 'relay_vs_raw_send_ratio',
  allocationConflictsPerAllocation: 'indexConflictsPerAllocation',
  hostClaimConflictsPerMachine: 'claimConflictsPerMachine',
};

export const REQUIRED_HEADLINES: readonly string[] = [
  'requestsPerMachine',
  'writesPerMachine',
  'writeFloorPerMachine',
  'pipelineVsDirectRatio',
  'addedLatencyP50Ms',
  'addedLatencyP99Ms',
  'allocationConflictsPerAllocation',
  'hostClaimConflictsPerMachine',
  'relayVsRawSqsRatio',
  'coldStartRatioMax',
  'bundleBytesMax',
];

/**
 * The results with the headline aliases added, and the headline figures a run lacks (absent, not a
 * number, or not finite). A partial run (`--only`) is allowed to lack them: the caller decides.
 */
export function withHeadlines(results: Readonly<Record<string, number>>): {
  results: Record<string, number>;
  missing: string[];
} {
  const out: Record<string, number> = { ...results };
  for (const [alias, name] of Object.entries(HEADLINE_ALIASES))
    if (typeof out[name] === 'number') out[alias] = out[name];
  const missing = REQUIRED_HEADLINES.filter((k) => typeof out[k] !== 'number' || !Number.isFinite(out[k]));
  return { results: out, missing };
}
