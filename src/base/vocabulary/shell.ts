/**
 * Reading shell command lines the way an agent's shell tool runs them: a small, conservative tokenizer (not
 * a shell parser), what a line writes, and the "shape" of a line or of its output with the noise removed.
 * Pure string functions; none of them throws, whatever the input.
 */

/** What joined a simple command to the one before it (`&` and newlines count as `;`); null for the first. */
export type Connector = "&&" | "||" | ";" | "|" | null;

/**
 * A redirection. `op` is the operator as written, with its file descriptor if any (`>`, `>>`, `1>`, `2>`,
 * `2>&`, `>&`, `&>`, `&>>`, `>|`, `<`, `<>`, `<&`, `<<`, `<<-`, `<<<`); `target` is the word after it, unquoted
 * (for a heredoc, its delimiter). A heredoc carries its body.
 */
export interface Redirect {
  op: string;
  target: string;
  body?: string;
}

/** One simple command of a line: its words with quotes removed, its source text, how it was joined, its redirections. */
export interface ShellCommand {
  words: string[];
  text: string;
  connector: Connector;
  redirects: Redirect[];
}

/** Words that open or close a compound command; dropped from the front of a command so `then pytest` is `pytest`. */
const KEYWORDS = new Set("! { } if then elif else fi do done while until esac".split(" "));

const CLOSER: Record<string, string> = { "(": ")", "{": "}", "`": "`", '"': '"' };

/**
 * Where the construct that opens at `i` (`(`, `{`, a backtick or a double quote) ends, just after its closer,
 * skipping what nests inside it; whether it was closed. Iterative, so deep nesting cannot overflow the stack.
 */
function constructEnd(src: string, i: number): { end: number; closed: boolean } {
  const stack = [CLOSER[src[i] ?? ""] ?? ")"];
  for (let j = i + 1; j < src.length; j++) {
    const ch = src[j];
    const top = stack[stack.length - 1];
    if (ch === "\\") j++;
    else if (ch === top) stack.pop();
    else if (top === '"') {
      if (ch === "$" && (src[j + 1] === "(" || src[j + 1] === "{")) stack.push(CLOSER[src[++j] ?? ""] ?? ")");
      else if (ch === "`") stack.push("`");
    } else if (top !== "`") {
      if (ch === "'") {
        const quote = src.indexOf("'", j + 1);
        if (quote === -1) break;
        j = quote;
      } else if (ch === '"' || ch === "`" || ch === "(") stack.push(CLOSER[ch] ?? ")");
    }
    if (stack.length === 0) return { end: j + 1, closed: true };
  }
  return { end: src.length, closed: false };
}

/** The value of the double-quoted string that opens at `i`: escapes applied, substitutions kept verbatim. */
function doubleQuoted(src: string, i: number): { value: string; end: number } {
  const { end, closed } = constructEnd(src, i);
  const last = closed ? end - 1 : end;
  let value = "";
  for (let j = i + 1; j < last; j++) {
    const ch = src[j] ?? "";
    const after = src[j + 1] ?? "";
    if (ch === "\\" && '$`"\\\n'.includes(after) && after !== "") {
      if (after !== "\n") value += after;
      j++;
    } else if (ch === "`" || (ch === "$" && (after === "(" || after === "{"))) {
      const inner = Math.min(constructEnd(src, ch === "`" ? j : j + 1).end, last);
      value += src.slice(j, inner);
      j = inner - 1;
    } else value += ch;
  }
  return { value, end };
}

/** The value of the ANSI-C string `$'...'` that opens at `i` (its `$`), with the common escapes applied. */
function ansiQuoted(src: string, i: number): { value: string; end: number } {
  let j = i + 2;
  while (j < src.length && src[j] !== "'") j += src[j] === "\\" ? 2 : 1;
  const escapes: Record<string, string> = { n: "\n", t: "\t", r: "\r" };
  const value = src
    .slice(i + 2, Math.min(j, src.length))
    .replace(/\\([\s\S])/g, (_, e: string) => escapes[e] ?? e);
  return { value, end: Math.min(j + 1, src.length) };
}

const REDIRECT_OPS = ["<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">"];

/**
 * Splits a command line into simple commands on `&&`, `||`, `;`, `&`, `|`, newlines and parentheses, honouring
 * quotes, backslashes, comments and heredocs; `$(...)`, backticks and `${...}` stay opaque inside their word.
 * On unbalanced quotes the rest of the line is one word: a best effort, never an exception.
 */
export function splitShell(command: string): ShellCommand[] {
  return new ShellLexer(command).run();
}

/** A word being read, and whether it is plain (no quote or escape in it: a keyword can only be plain). */
interface Word {
  value: string;
  plain: boolean;
}

/** Characters that are only ever part of a word, whatever comes before or after them. */
const ORDINARY = /[^\s#\\'"$`<>&|;()]+/y;

/** One pass over a command line: the cursor, the word being built, and the command being gathered. */
class ShellLexer {
  private readonly out: ShellCommand[] = [];
  private words: Word[] = [];
  private redirects: Redirect[] = [];
  private word: Word | null = null;
  /** A redirection operator waiting for its target. */
  private pending: string | null = null;
  private heredocs: { redirect: Redirect; delimiter: string; strip: boolean }[] = [];
  private next: Connector = null;
  private start = 0;
  private i = 0;

  constructor(private readonly src: string) {}

  run(): ShellCommand[] {
    const src = this.src;
    while (this.i < src.length) {
      // A run of characters that mean nothing to the shell joins the word at once.
      ORDINARY.lastIndex = this.i;
      if (ORDINARY.test(src)) {
        this.append(src.slice(this.i, ORDINARY.lastIndex));
        this.i = ORDINARY.lastIndex;
      } else this.step(src[this.i] ?? "", src[this.i + 1] ?? "");
    }
    this.flush(this.src.length);
    return this.out;
  }

  /** Reads what opens at the cursor: `c` and the character after it, `d`. */
  private step(c: string, d: string): void {
    const src = this.src;
    if (c === " " || c === "\t" || c === "\r") {
      this.endWord();
      this.i++;
    } else if (c === "\n") this.newline();
    else if (c === "#" && this.word === null) {
      const eol = src.indexOf("\n", this.i);
      this.i = eol === -1 ? src.length : eol;
    } else if (c === "\\") {
      if (d !== "\n" && d !== "") this.append(d, false);
      this.i += 2;
    } else if (c === "'") {
      const end = src.indexOf("'", this.i + 1);
      this.append(src.slice(this.i + 1, end === -1 ? src.length : end), false);
      this.i = end === -1 ? src.length : end + 1;
    } else if (c === '"' || (c === "$" && d === '"')) {
      const quoted = doubleQuoted(src, c === "$" ? this.i + 1 : this.i);
      this.append(quoted.value, false);
      this.i = quoted.end;
    } else if (c === "$" && d === "'") {
      const quoted = ansiQuoted(src, this.i);
      this.append(quoted.value, false);
      this.i = quoted.end;
    } else if (
      c === "`" ||
      ((c === "$" || c === "<" || c === ">") && (d === "(" || (c === "$" && d === "{")))
    ) {
      // Substitutions stay opaque: their text is part of the word, never split into commands.
      this.opaque(constructEnd(src, c === "`" ? this.i : this.i + 1).end);
    } else if (c === "<" || c === ">" || (c === "&" && d === ">")) this.redirection(c, d);
    else if (c === "&") this.operator(d === "&" ? "&&" : ";", d === "&" ? 2 : 1);
    else if (c === "|") this.operator(d === "|" ? "||" : "|", d === "|" || d === "&" ? 2 : 1);
    else if (c === ";") this.operator(";", d === ";" || d === "&" ? 2 : 1);
    else if (c === "(" && (this.word !== null ? this.word.value.endsWith("=") : d === "(")) {
      // An array assignment `a=(1 2)` or arithmetic `((i > 3))`: one opaque word, not a subshell.
      this.opaque(constructEnd(src, this.i).end);
    } else if (c === "(" || c === ")") {
      this.flush(this.i);
      if (c === ")") this.next = null;
      this.i++;
      this.start = this.i;
    } else {
      this.append(c);
      this.i++;
    }
  }

  private newline(): void {
    this.endWord(); // a heredoc's delimiter may be the line's last word
    const end = this.heredocs.length > 0 ? this.readHeredocs() : this.i + 1;
    this.flush(end);
    // A newline after `|`, `&&` or `||` continues the line.
    if (this.next === null && this.out.length > 0) this.next = ";";
    this.i = end;
    this.start = end;
  }

  /** `<`, `>`, `>>`, `&>`, `2>&1` and their kin: the operator, its file descriptor, then its target word. */
  private redirection(c: string, d: string): void {
    let fd = "";
    if (this.word?.plain === true && /^\d+$/.test(this.word.value) && c !== "&") {
      fd = this.word.value;
      this.word = null;
    }
    this.endWord();
    const src = this.src;
    const op =
      c === "&"
        ? d === ">" && src[this.i + 2] === ">"
          ? "&>>"
          : "&>"
        : REDIRECT_OPS.find((o) => src.startsWith(o, this.i));
    this.pending = fd + (op ?? c);
    this.i += (op ?? c).length;
  }

  /** The source up to `end` joins the word as it is written. */
  private opaque(end: number): void {
    this.append(this.src.slice(this.i, end));
    this.i = end;
  }

  private endWord(): void {
    const word = this.word;
    if (word === null) return;
    if (this.pending === null) this.words.push(word);
    else {
      const redirect: Redirect = { op: this.pending, target: word.value };
      this.redirects.push(redirect);
      if (this.pending === "<<" || this.pending === "<<-")
        this.heredocs.push({ redirect, delimiter: word.value, strip: this.pending === "<<-" });
      this.pending = null;
    }
    this.word = null;
  }

  /** Ends the command being gathered at `end`, without its leading keywords (`then`, `do`, `!`). */
  private flush(end: number): void {
    this.endWord();
    this.pending = null;
    const words = this.words;
    while (words[0] !== undefined && words[0].plain && KEYWORDS.has(words[0].value)) words.shift();
    if (words.length > 0 || this.redirects.length > 0) {
      const connector = this.out.length === 0 ? null : (this.next ?? ";");
      this.out.push({
        words: words.map((w) => w.value),
        text: this.src.slice(this.start, end).trim(),
        connector,
        redirects: this.redirects,
      });
      this.next = null;
    }
    this.words = [];
    this.redirects = [];
  }

  private operator(op: Connector, length: number): void {
    this.flush(this.i);
    this.next = op;
    this.i += length;
    this.start = this.i;
  }

  private append(text: string, plain = true): void {
    this.word ??= { value: "", plain: true };
    this.word.value += text;
    if (!plain) this.word.plain = false;
  }

  /** The body lines of the heredocs opened on the line that ends at the cursor, up to each terminator. */
  private readHeredocs(): number {
    const src = this.src;
    let pos = this.i + 1;
    for (const h of this.heredocs) {
      const body: string[] = [];
      while (pos < src.length) {
        const eol = src.indexOf("\n", pos);
        const lineEnd = eol === -1 ? src.length : eol;
        let line = src.slice(pos, lineEnd);
        pos = lineEnd + 1;
        if (line.endsWith("\r")) line = line.slice(0, -1);
        // `<<-` strips leading tabs from the body as well as from the terminator.
        if (h.strip) line = line.replace(/^\t+/, "");
        if (line === h.delimiter) break;
        body.push(line);
      }
      h.redirect.body = body.join("\n");
    }
    this.heredocs = [];
    return Math.min(pos, src.length);
  }
}

/** Whether a word is a variable assignment (`FOO=1`, `PATH+=:/x`), as at the front of a simple command. */
export function isAssignment(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(word);
}

/** A shell wrapper or runner: the words that name it, its options that take a value, how many operands it takes. */
interface Wrapper {
  words: string[];
  withValue?: string[];
  operands?: number;
  /** Options after which the wrapper does not run the rest (`command -v x` only looks x up). */
  stopAt?: string[];
}

const WRAPPERS: Wrapper[] = [
  { words: ["env"], withValue: ["-u", "--unset", "-C", "--chdir"] },
  { words: ["time"] },
  { words: ["timeout"], withValue: ["-s", "--signal", "-k", "--kill-after"], operands: 1 },
  { words: ["nice"], withValue: ["-n", "--adjustment"] },
  { words: ["stdbuf"], withValue: ["-i", "-o", "-e"] },
  { words: ["xvfb-run"], withValue: ["-s", "--server-args", "-n", "--server-num", "-e", "-f", "-p", "-w"] },
  { words: ["command"], stopAt: ["-v", "-V"] },
  { words: ["exec"], withValue: ["-a"] },
  { words: ["sudo"], withValue: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"] },
  { words: ["poetry", "run"] },
  {
    words: ["uv", "run"],
    withValue: ["--with", "-p", "--python", "--extra", "--group", "--package", "--directory", "--project"],
  },
  { words: ["pipenv", "run"] },
  { words: ["pdm", "run"] },
  { words: ["hatch", "run"] },
  { words: ["conda", "run"], withValue: ["-n", "--name", "-p", "--prefix", "--cwd"] },
  { words: ["mamba", "run"], withValue: ["-n", "--name", "-p", "--prefix", "--cwd"] },
  { words: ["bundle", "exec"] },
  { words: ["npx"], withValue: ["-p", "--package"] },
  { words: ["npm", "exec"], withValue: ["-p", "--package"] },
  { words: ["pnpm", "exec"] },
  { words: ["pnpm", "dlx"] },
  { words: ["yarn", "exec"] },
  { words: ["yarn", "dlx"] },
  { words: ["bunx"] },
];

/**
 * The words of the command a wrapper runs: drops leading assignments, `env`, `time`, `timeout`, `nice`,
 * `stdbuf`, `xvfb-run`, `command`, `exec`, `sudo` and runners (`poetry run`, `uv run`, `npx`, `bundle exec`...)
 * with their options, as often as they nest. `python -m X` is kept: the module is the command.
 */
export function stripWrappers(words: readonly string[]): string[] {
  let k = 0;
  for (;;) {
    while (k < words.length && isAssignment(words[k] ?? "")) k++;
    const wrapper = WRAPPERS.find((w) => w.words.every((name, n) => words[k + n] === name));
    if (wrapper === undefined) return words.slice(k);
    k += wrapper.words.length;
    for (let option = words[k]; option !== undefined && /^[-+]./.test(option); option = words[k]) {
      if (wrapper.stopAt?.includes(option) === true) return words.slice(k - wrapper.words.length);
      k += wrapper.withValue?.includes(option) === true ? 2 : 1;
      if (option === "--") break;
    }
    k += wrapper.operands ?? 0;
  }
}

/** The script of `bash -c SCRIPT` (also `sh`, `zsh`, `-lc`, `-euo pipefail -c`), with whether it sets pipefail. */
export function innerScript(words: readonly string[]): { script: string; pipefail: boolean } | null {
  const shell = (words[0] ?? "").split("/").pop() ?? "";
  if (!["bash", "sh", "zsh", "dash", "ksh"].includes(shell)) return null;
  let k = 1;
  let dashC = false;
  let pipefail = false;
  for (let w = words[k]; w !== undefined && /^[-+]/.test(w); w = words[k]) {
    if (/^[-+][a-zA-Z]*o$/.test(w)) {
      pipefail ||= w.startsWith("-") && words[k + 1] === "pipefail";
      k++;
    } else if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(w)) dashC = true;
    k++;
  }
  const script = words[k];
  return dashC && script !== undefined ? { script, pipefail } : null;
}

const isPipefail = (c: ShellCommand) =>
  c.words[0] === "set" &&
  c.words.some((w, k) => w === "pipefail" && /^-[a-zA-Z]*o$/.test(c.words[k - 1] ?? ""));

/** The stages of a pipeline, and whether `set -o pipefail` came before it. */
export interface Pipeline {
  stages: ShellCommand[];
  pipefail: boolean;
}

/**
 * The stages of the line's last pipeline, whose exit status is the line's, and whether `set -o pipefail`
 * came earlier. A last command `bash -c SCRIPT` is looked into, since its status is the script's.
 */
export function pipelineOfLast(command: string): Pipeline {
  let line = command;
  let inherited = false;
  // A few levels of `bash -c "bash -c ..."` at most: deeper nesting is not worth following.
  for (let depth = 0; ; depth++) {
    const commands = splitShell(line);
    const first = Math.max(
      commands.findLastIndex((c, k) => k === 0 || c.connector !== "|"),
      0,
    );
    const stages = commands.slice(first);
    const pipefail = inherited || commands.slice(0, first).some(isPipefail);
    const inner =
      stages.length === 1 && depth < 3 ? innerScript(stripWrappers(stages[0]?.words ?? [])) : null;
    if (inner === null) return { stages, pipefail };
    line = inner.script;
    inherited = inner.pipefail;
  }
}
