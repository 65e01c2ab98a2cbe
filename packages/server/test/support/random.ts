/**
 * A deterministic generator (mulberry32) of numbers in [0, 1): the same seed gives the same run, so a
 * failing storm or fault run is replayed with its seed.
 *
 * @example
 * const next = seededRandom(42); next(); // always the same first number
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
