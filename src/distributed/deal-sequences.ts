// How a data-parallel batch is split: each sequence, in order, goes to the rank holding the fewest
// tokens so far (ties to the lowest rank), so the ranks' work is even and the split depends only on
// the sequences and the number of ranks (the same every run). Each share keeps the batch's order.
// One rank gets everything, in order: a group of one trains exactly as a lone trainer.

export function dealSequences<S extends { tokens: readonly unknown[] }>(sequences: readonly S[], ranks: number): S[][] {
  const shares: S[][] = Array.from({ length: ranks }, () => []);
  const load = new Array<number>(ranks).fill(0);
  for (const sequence of sequences) {
    let rank = 0;
    for (let r = 1; r < ranks; r++) if ((load[r] as number) < (load[rank] as number)) rank = r;
    (shares[rank] as S[]).push(sequence);
    load[rank] = (load[rank] as number) + sequence.tokens.length;
  }
  return shares;
}
