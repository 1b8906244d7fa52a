/** The files a shell command writes or removes, as far as its words tell. */
import { innerScript, splitShell, stripWrappers, type Redirect, type ShellCommand } from "./shell.js";

/**
 * The files a shell command writes or removes, as far as its words tell: redirections, and the commands that
 * edit or remove.
 */

/** Redirections that send standard output to a file; `2>` only sends errors (a log, not an edit). */
const STDOUT_OPS = new Set([">", ">>", ">|", "1>", "1>>", "1>|", "&>", "&>>"]);

function redirectWrites(r: Redirect): boolean {
  if (STDOUT_OPS.has(r.op)) return true;
  // `>&file` sends both streams to a file; `>&2`, `2>&1` and `>&-` only duplicate or close descriptors.
  return (r.op === ">&" || r.op === "1>&") && !/^(\d+|-)$/.test(r.target);
}

/** The operands among a command's arguments: options (and the values of those in `withValue`) skipped. */
function operands(args: readonly string[], withValue: readonly string[] = []): string[] {
  const out: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const w = args[k] ?? "";
    if (w === "--") return [...out, ...args.slice(k + 1)];
    if (!/^-./.test(w)) out.push(w);
    else if (withValue.includes(w)) k++;
  }
  return out;
}

/**
 * The files `sed` or `perl` edits in place: the operands after the script, when an in-place flag (`-i`,
 * `-i.bak`, `-pi`, `--in-place`, BSD `-i ''`) is given. A short option `-e`/`-f` (or `-E` for perl) means
 * the script came as its value, so every operand is a file.
 */
function inPlaceFiles(args: readonly string[], perl: boolean): string[] {
  let inPlace = false;
  let scriptGiven = false;
  const positional: string[] = [];
  const scriptFlags = perl ? "eE" : "ef";
  const valueFlags = perl ? "I" : "l";
  for (let k = 0; k < args.length; k++) {
    const w = args[k] ?? "";
    if (w === "--" || !/^-./.test(w)) {
      // perl stops reading options at its first operand; sed reads them anywhere.
      if (perl || w === "--") {
        positional.push(...args.slice(w === "--" ? k + 1 : k));
        break;
      }
      positional.push(w);
    } else if (w.startsWith("--")) {
      inPlace ||= w === "--in-place" || w.startsWith("--in-place=");
      if (w === "--expression" || w === "--file") k++;
      scriptGiven ||= /^--(expression|file)\b/.test(w);
    } else {
      for (let n = 1; n < w.length; n++) {
        const flag = w[n] ?? "";
        const last = n === w.length - 1;
        if (flag === "i") {
          inPlace = true;
          if (!perl && last && args[k + 1] === "") k++;
          break;
        }
        if (scriptFlags.includes(flag) || valueFlags.includes(flag)) {
          scriptGiven ||= scriptFlags.includes(flag);
          if (last) k++;
          break;
        }
        if (perl && /[0lMmx]/.test(flag)) break;
      }
    }
  }
  if (!inPlace) return [];
  return scriptGiven ? positional : positional.slice(1);
}

/** The files `git checkout -- FILE...` and `git restore FILE...` put back (a write to the working tree). */
function gitWrites(args: readonly string[]): string[] {
  let k = 0;
  for (let w = args[k]; w?.startsWith("-") === true; w = args[k]) k += ["-C", "-c"].includes(w) ? 2 : 1;
  const rest = args.slice(k + 1);
  if (args[k] === "checkout") return rest.includes("--") ? rest.slice(rest.indexOf("--") + 1) : [];
  if (args[k] !== "restore") return [];
  const flags = rest.filter((w) => /^-[a-zA-Z]+$/.test(w)).join("");
  const staged = rest.includes("--staged") || flags.includes("S");
  // `--staged` alone resets the index, not the files.
  if (staged && !rest.includes("--worktree") && !flags.includes("W")) return [];
  return operands(rest, ["-s", "--source"]);
}

/** The destination of `cp` or `mv`: `-t DIR`, else the last operand when there are two or more. */
function destination(args: readonly string[]): string[] {
  for (let k = 0; k < args.length; k++) {
    const w = args[k] ?? "";
    if ((w === "-t" || w === "--target-directory") && args[k + 1] !== undefined) return [args[k + 1] ?? ""];
    if (w.startsWith("--target-directory=")) return [w.slice("--target-directory=".length)];
  }
  const files = operands(args, ["-S", "--suffix"]);
  return files.length >= 2 ? files.slice(-1) : [];
}

/** The files a simple command (wrappers stripped) writes by what it is, apart from its redirections. */
function commandWrites(words: readonly string[]): string[] {
  const args = words.slice(1);
  switch ((words[0] ?? "").split("/").pop()) {
    case "tee":
      return operands(args);
    case "sed":
    case "gsed":
      return inPlaceFiles(args, false);
    case "perl":
      return inPlaceFiles(args, true);
    // `rm` and `touch` are left out: removing build output or a scratch script, or touching a file, is
    // housekeeping, not a change of the code a check must see.
    case "cp":
    case "mv":
      return destination(args);
    case "truncate":
      return operands(args, ["-s", "--size", "-r", "--reference"]);
    case "dd":
      return args.filter((w) => w.startsWith("of=")).map((w) => w.slice(3));
    case "patch": {
      // The patched file is the first operand, if named; with only `-i PATCH` or stdin it is unknown.
      const output = args.flatMap((w, k) => (w === "-o" || w === "--output" ? [args[k + 1] ?? ""] : []));
      const files = operands(args, [
        "-i",
        "--input",
        "-o",
        "--output",
        "-p",
        "-d",
        "--directory",
        "-F",
        "-B",
      ]);
      return [...files.slice(0, 1), ...output];
    }
    case "git":
      return gitWrites(args);
    default:
      return [];
  }
}

/** The files a simple command removes or moves away (`rm`, `rmdir`, `unlink`, `git rm`, `mv`'s sources). */
function commandRemovals(words: readonly string[]): string[] {
  const args = words.slice(1);
  switch ((words[0] ?? "").split("/").pop()) {
    case "rm":
    case "rmdir":
    case "unlink":
    case "shred":
      return operands(args);
    case "mv": {
      const all = operands(args, ["-t", "--target-directory", "-S", "--suffix"]);
      return args.includes("-t") || args.some((a) => a.startsWith("--target-directory"))
        ? all
        : all.slice(0, -1);
    }
    case "git":
      return args[0] === "rm" ? operands(args.slice(1)) : [];
    default:
      return [];
  }
}

/** Whether a path is literal: no expansion, substitution or glob to resolve. */
const literal = (file: string) => file !== "" && !/[$`*?[]/.test(file);

/**
 * What a command line does to files, as far as its words tell, also inside `bash -c`. `writes`: the files
 * it writes (stdout redirections, `tee`, in-place `sed`/`perl`, `cp`/`mv` destinations, `truncate`,
 * `dd of=`, `patch`, `git checkout --`/`git restore`), `/dev/*` left out. `removes`: the files it removes or
 * moves away (`rm`, `rmdir`, `unlink`, `shred`, `git rm`, `mv`'s sources), not edits (removing build output
 * is housekeeping) but what a guard over files that must not go away (reins' own) needs to see. Each in
 * order, each file once, as written (relative to where the command ran); only literal paths. `command` may
 * come already split.
 */
export function shellEffects(command: string | readonly ShellCommand[]): {
  writes: string[];
  removes: string[];
} {
  const writes = new Set<string>();
  const removes = new Set<string>();
  const write = (file: string) => {
    if (literal(file) && file !== "-" && !file.startsWith("/dev/")) writes.add(file);
  };
  const walk = (commands: readonly ShellCommand[], depth: number) => {
    for (const c of commands) {
      const words = stripWrappers(c.words);
      // Inside `[[ ]]`, `>` compares strings.
      if (words[0] !== "[[") for (const r of c.redirects) if (redirectWrites(r)) write(r.target);
      commandWrites(words).forEach(write);
      for (const file of commandRemovals(words)) if (literal(file)) removes.add(file);
      const inner = depth < 3 ? innerScript(words) : null;
      if (inner !== null) walk(splitShell(inner.script), depth + 1);
    }
  };
  walk(typeof command === "string" ? splitShell(command) : command, 0);
  return { writes: [...writes], removes: [...removes] };
}

/** The files a command line writes: `shellEffects(command).writes`. */
export function shellWrites(command: string): string[] {
  return shellEffects(command).writes;
}
