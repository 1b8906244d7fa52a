/** `reins alerts`: open alerts to list and acknowledge. */
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import { acknowledgeAlert } from "../../guard/people/actions.js";
import { table } from "../../base/text/table.js";
import { type StoreContext, withStore, actor } from "../store-access.js";
import { claimOf, provePerson, withPersonToken } from "../person-proof.js";

interface AlertsOptions {
  scope?: string;
  all?: boolean;
  ack?: string;
  by?: string;
  token?: string;
  json?: boolean;
}

/** Registers `reins alerts`. */
export function registerAlertsCommand(root: Command, ctx: StoreContext): void {
  const { io } = ctx;
  const json = (value: unknown) => io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  withPersonToken(
    root
      .command("alerts")
      .description("open alerts, newest first; --ack <id> acknowledges one")
      .option("--scope <scope>", "only this scope's alerts")
      .option("--all", "acknowledged ones too")
      .option("--ack <id>", "acknowledge this alert")
      .option("--by <name>", "who acknowledges")
      .option("--json", "print JSON"),
  ).action(async (opts: AlertsOptions) => {
    const loaded = ctx.loaded();
    if (opts.ack !== undefined) provePerson(loaded.root, claimOf("alerts --ack", opts.token, io.env));
    await withStore(
      ctx,
      async (store, policy) => {
        if (opts.ack !== undefined) {
          const by = actor(opts.by);
          const alert = await acknowledgeAlert(store, policy, loaded.root, opts.ack, by, Date.now());
          if (alert === null)
            throw new ReinsError("not_found", `no alert "${opts.ack}" (see \`reins alerts --all\`)`);
          if (opts.json === true) return json(alert);
          return io.stdout(`acknowledged ${alert.id}\n`);
        }
        const alerts = await store.alerts({
          ...(opts.scope !== undefined ? { scope: opts.scope } : {}),
          ...(opts.all === true ? {} : { acknowledged: false }),
        });
        if (opts.json === true) return json(alerts);
        if (alerts.length === 0) return io.stdout("no open alerts\n");
        io.stdout(
          table(
            ["id", "time (UTC)", "kind", "message"],
            alerts.map((a) => [
              a.id,
              new Date(a.at).toISOString().slice(0, 19).replace("T", " "),
              a.kind + (a.acknowledged ? ` (ack ${a.acknowledgedBy ?? ""})` : ""),
              a.message,
            ]),
          ),
        );
      },
      loaded,
    );
  });
}
