/**
 * `reins doctor`'s tamper lines (docs/tamper-detection.md): in a project reins was set up in (its install
 * record in the user's state folder), whether the hooks it installed are as it installed them, and whether
 * the store holds every event the hooks saw recorded; with what the turns' checks found before.
 */
import { hookChanges, readInstallRecord } from "../base/config/install-record.js";
import { loadPolicy } from "../base/config/load-policy.js";
import { readFindings, readMarks, readSeenStore } from "../base/config/store-marks.js";
import type { Store } from "../base/core/store.js";
import { lostEvents, shown } from "../guard/hooks/tamper-check.js";
import { openStore } from "../base/store/open.js";

/** One line of the report (doctor.ts's DoctorCheck). */
interface DoctorCheck {
  subject: string;
  check: string;
  status: "ok" | "fail";
  message: string;
  fix?: string;
}

/** What the checks need of doctor.ts's DoctorOptions. */
interface DoctorOptions {
  root: string;
  env: NodeJS.ProcessEnv;
  policyFile?: string;
  storeSpec?: string;
}

/** The marks doctor compares with the store: the most recent sessions'. */
const MARKS = 50;

const day = (at: number) => new Date(at).toISOString().slice(0, 10);

/** Per agent reins recorded installing: its hooks as installed, or what became of them. */
export function installedChecks(o: DoctorOptions): DoctorCheck[] {
  const record = readInstallRecord(o.root, o.env);
  if (record === null) return [];
  return hookChanges(record).map((c) => {
    const installed = record.agents[c.agent];
    const base = { subject: c.agent, check: "as installed" };
    const file = shown(o.root, c.file);
    if (c.changes.length === 0)
      return {
        ...base,
        status: "ok" as const,
        message: `the hooks reins installed in ${file} are there as installed`,
      };
    return {
      ...base,
      status: "fail" as const,
      message: `reins was set up here (${day(installed?.at ?? 0)}), but the hooks it installed in ${file} were changed: ${c.changes.join(", ")}; guarding of tool calls is off`,
      fix: `reins init ${c.agent}`,
    };
  });
}

const FIX =
  "see what removed them (the store's log, the agent's transcript); `reins init <agent>` again clears this line";
/** For calls that ran with no hook answered: the daemon that should have answered them says why in its log. */
const CALLS_FIX =
  "see why the hook daemon did not answer (`reins daemon status`, its log under the runtime folder); `reins init <agent>` again clears this line";

/** The store against the marks the hooks kept, and what the turns' checks found before. */
export async function storeTamperChecks(o: DoctorOptions): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  for (const finding of dedupe(readFindings(o.root, o.env)))
    checks.push({
      subject: finding.what === "store" ? "store" : "hooks",
      check: finding.what === "calls" ? "unanswered" : "tampered",
      status: "fail",
      message: `${new Date(finding.at).toISOString()} ${finding.scope}: ${finding.detail.replace(/^reins: /, "")}`,
      fix: finding.what === "calls" ? CALLS_FIX : FIX,
    });
  const marks = readMarks(o.root, o.env, MARKS);
  const seen = readSeenStore(o.root, o.env);
  if (marks.length === 0 && seen === null) return checks;
  let store: Store;
  try {
    const loaded = loadPolicy({
      cwd: o.root,
      env: o.env,
      ...(o.policyFile !== undefined ? { file: o.policyFile } : {}),
    });
    store = await openStore(o.storeSpec ?? loaded.policy.store, o.root);
    try {
      checks.push(...(await liveChecks(o, store, loaded.policy, marks, seen)));
    } finally {
      await store.close();
    }
  } catch {
    // A store that does not open is the store line's to report.
  }
  return checks;
}

function dedupe<T extends { detail: string; scope: string }>(findings: readonly T[]): T[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.scope}\n${f.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function liveChecks(
  o: DoctorOptions,
  store: Store,
  policy: Parameters<typeof lostEvents>[3],
  marks: Parameters<typeof lostEvents>[1][],
  seen: ReturnType<typeof readSeenStore>,
): Promise<DoctorCheck[]> {
  const where = shown(o.root, store.location);
  const base = { subject: "store", check: "events" };
  const id = (await store.identity?.()) ?? null;
  if (id !== null && seen !== null && seen.location === store.location && seen.id !== id)
    return [
      {
        ...base,
        status: "fail",
        message: `${where} is not the store the hooks recorded to: it was replaced, and the events recorded before are gone`,
        fix: FIX,
      },
    ];
  const lost: string[] = [];
  const now = Date.now();
  for (const mark of marks) {
    const state = await store.state(mark.scope);
    const why = await lostEvents(store, mark, state?.seq ?? 0, policy, now);
    if (why !== null) lost.push(`${mark.scope}: ${why}`);
  }
  if (lost.length > 0)
    return [{ ...base, status: "fail", message: `${where} lost events: ${lost.join("; ")}`, fix: FIX }];
  return [
    {
      ...base,
      status: "ok",
      message: `${where} holds every event the hooks saw recorded (${marks.length} session(s) checked)`,
    },
  ];
}
