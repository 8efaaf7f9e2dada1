/** The middle value (the upper middle for an even count): the benches' figure for repeated runs. */
export const median = (xs: readonly number[]): number => {
  if (xs.length === 0) throw new RangeError('median of no values');
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
};
