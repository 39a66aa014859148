// Pre-tokenization with `Split` regexes in "Isolated" mode: every match becomes a piece, and so
// does every stretch between matches, so no character is ever dropped.

/** Splits `text` into pieces with each pattern in turn (each pattern splits the previous pieces). */
export function preTokenize(text: string, patterns: readonly RegExp[]): string[] {
  let pieces = [text];
  for (const pattern of patterns) pieces = pieces.flatMap((piece) => splitIsolated(piece, pattern));
  return pieces;
}

function splitIsolated(text: string, pattern: RegExp): string[] {
  const pieces: string[] = [];
  let start = 0;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0] === '') {
      // An empty match splits nothing; step over one code point so the scan moves on.
      pattern.lastIndex += (text.codePointAt(pattern.lastIndex) ?? 0) > 0xffff ? 2 : 1;
      continue;
    }
    if (match.index > start) pieces.push(text.slice(start, match.index));
    pieces.push(match[0]);
    start = match.index + match[0].length;
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}
