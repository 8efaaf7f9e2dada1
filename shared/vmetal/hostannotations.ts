/**
 * The host's network annotations before a NodeClaim took it (issue 19, Behaviour 2 and 8), pure:
 * saved on the host in the claim's own write, restored exactly on release (absent stays absent).
 */
import type { BareMetalHost } from '../api/baremetalhost.ts';
import { isRecord } from '../api/json.ts';
import { VMETAL_ORIGINAL_ANNOTATIONS } from '../api/wellknown.ts';
import { HOST_NETWORK_ANNOTATIONS } from './network.ts';

/** Saves the current network annotations (once: a saved record is never overwritten). */
export function saveOriginalAnnotations(h: BareMetalHost): void {
  const ann = { ...(h.metadata.annotations ?? {}) };
  if (ann[VMETAL_ORIGINAL_ANNOTATIONS] !== undefined) return;
  const saved: Record<string, string | null> = {};
  for (const k of HOST_NETWORK_ANNOTATIONS) saved[k] = ann[k] ?? null;
  ann[VMETAL_ORIGINAL_ANNOTATIONS] = JSON.stringify(saved);
  h.metadata.annotations = ann;
}

/**
 * Puts the saved annotations back (absent ones removed) and drops the record; a host without a
 * record (never claimed by a NodeClaim, or already restored) is left as it is.
 */
export function restoreOriginalAnnotations(h: BareMetalHost): void {
  const ann = { ...(h.metadata.annotations ?? {}) };
  const text = ann[VMETAL_ORIGINAL_ANNOTATIONS];
  if (text === undefined) return;
  let saved: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) saved = parsed;
  } catch {
    // A record someone broke: the network annotations we write are removed, nothing is invented.
  }
  for (const k of HOST_NETWORK_ANNOTATIONS) {
    const v = saved[k];
    if (typeof v === 'string') ann[k] = v;
    else delete ann[k];
  }
  delete ann[VMETAL_ORIGINAL_ANNOTATIONS];
  h.metadata.annotations = ann;
}
