/** Memos for pure functions of agent text that the guards ask about again and again (paths, commands). */

/** Longest text a memo keeps: a longer one (a heredoc, a pasted file) is judged afresh each time. */
const LONGEST = 1024;

/**
 * `fn` remembering its answers for up to `size` texts of at most LONGEST characters; past that it forgets
 * them all and starts again, so a session that never repeats itself costs a little more time, never more
 * than about 2 × `size` KB of memory. `fn` must be pure.
 */
export function memoize<T>(fn: (text: string) => T, size = 512): (text: string) => T {
  const answers = new Map<string, T>();
  return (text) => {
    if (text.length > LONGEST) return fn(text);
    let answer = answers.get(text);
    if (answer === undefined && !answers.has(text)) {
      answer = fn(text);
      if (answers.size >= size) answers.clear();
      answers.set(text, answer);
    }
    return answer as T;
  };
}
