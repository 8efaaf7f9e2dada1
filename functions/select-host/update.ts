/**
 * optimisticUpdate already reports an object deleted between its read and its write as `gone`;
 * this name is kept for the callers that read better with it.
 */
export { optimisticUpdate as updateOrGone } from '../../shared/kube/optimistic.ts';
