import { useState } from "preact/hooks";
import { api, enc, ApiError } from "./api.js";
import {
  Modal,
  closeDialog,
  refreshAll,
  rememberName,
  rememberedName,
  reportDone,
  showDialog,
} from "./ui.js";

/** The human actions: extend and reset a budget, acknowledge and reset a breaker, acknowledge an alert. */

function ActionForm(props: {
  title: string;
  intro: string;
  reasonRequired: boolean;
  confirm: string;
  amount?: boolean;
  submit: (fields: {
    reason: string;
    by: string;
    amount: number;
    resource: "tokens" | "usd";
  }) => Promise<string>;
}) {
  const [reason, setReason] = useState("");
  const [by, setBy] = useState(rememberedName());
  const [amount, setAmount] = useState("");
  const [resource, setResource] = useState<"tokens" | "usd">("tokens");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      rememberName(by);
      const done = await props.submit({
        reason: reason.trim(),
        by: by.trim(),
        amount: Number(amount),
        resource,
      });
      closeDialog();
      reportDone(done);
      refreshAll();
    } catch (err) {
      setError(err instanceof ApiError ? err.toString() : String(err));
      setBusy(false);
    }
  };
  return (
    <Modal title={props.title}>
      <form method="dialog" onSubmit={(e) => void onSubmit(e)}>
        <p class="muted">{props.intro}</p>
        {props.amount === true && (
          <div class="row">
            <label>
              Amount
              <input
                name="amount"
                type="number"
                min={resource === "tokens" ? 1 : 0.01}
                step={resource === "tokens" ? 1 : 0.01}
                max={1_000_000}
                required
                value={amount}
                onInput={(e) => setAmount(e.currentTarget.value)}
              />
            </label>
            <label>
              Resource
              <select
                name="resource"
                value={resource}
                onChange={(e) => setResource(e.currentTarget.value as "tokens" | "usd")}
              >
                <option value="tokens">tokens</option>
                <option value="usd">USD</option>
              </select>
            </label>
          </div>
        )}
        <label>
          Reason{props.reasonRequired ? "" : " (optional)"}
          <textarea
            name="reason"
            required={props.reasonRequired}
            maxLength={2_000}
            rows={3}
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
        </label>
        <label>
          Your name (optional, recorded with the action)
          <input name="by" maxLength={256} value={by} onInput={(e) => setBy(e.currentTarget.value)} />
        </label>
        {error !== null && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <div class="buttons">
          <button type="button" onClick={closeDialog}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {props.confirm}
          </button>
        </div>
      </form>
    </Modal>
  );
}

const who = (by: string) => (by === "" ? {} : { by });

export function extendBudget(scope: string): void {
  showDialog(
    <ActionForm
      title={`Extend the budget of ${scope}`}
      intro="Adds allowance to the session's budget; a paused budget goes on when it is under its limit again."
      reasonRequired
      amount
      confirm="Extend"
      submit={async ({ reason, by, amount, resource }) => {
        const body =
          resource === "tokens" ? { additional_tokens: Math.round(amount) } : { additional_usd: amount };
        await api("POST", `api/budgets/${enc(scope)}/extend`, { ...body, reason, ...who(by) });
        return `Extended ${scope} by ${amount} ${resource}`;
      }}
    />,
  );
}

export function resetBudget(scope: string): void {
  showDialog(
    <ActionForm
      title={`Reset the budget of ${scope}`}
      intro="Starts the session's spend from zero and lifts a pause."
      reasonRequired
      confirm="Reset budget"
      submit={async ({ reason, by }) => {
        await api("POST", `api/budgets/${enc(scope)}/reset`, { reason, ...who(by) });
        return `Reset the budget of ${scope}`;
      }}
    />,
  );
}

export function acknowledgeBreaker(scope: string): void {
  showDialog(
    <ActionForm
      title={`Acknowledge the breaker of ${scope}`}
      intro="The breaker goes half-open: the agent may make one probe call; a good one closes it, a bad one opens it again."
      reasonRequired={false}
      confirm="Acknowledge"
      submit={async ({ reason, by }) => {
        await api("POST", `api/circuits/${enc(scope)}/acknowledge`, {
          ...(reason !== "" ? { reason } : {}),
          ...who(by),
        });
        return `Acknowledged the breaker of ${scope}: half-open`;
      }}
    />,
  );
}

export function resetBreaker(scope: string): void {
  showDialog(
    <ActionForm
      title={`Reset the breaker of ${scope}`}
      intro="Closes the breaker at once and forgets the streak that tripped it."
      reasonRequired={false}
      confirm="Reset breaker"
      submit={async ({ reason, by }) => {
        await api("POST", `api/circuits/${enc(scope)}/reset`, {
          ...(reason !== "" ? { reason } : {}),
          ...who(by),
        });
        return `Reset the breaker of ${scope}`;
      }}
    />,
  );
}

export async function acknowledgeAlert(id: string): Promise<void> {
  const by = rememberedName();
  await api("POST", `api/alerts/${enc(id)}/acknowledge`, who(by));
  refreshAll();
}

/** Asks for the API token; resolves null when the person cancels. */
export function askForToken(why: string): Promise<string | null> {
  return new Promise((resolve) => {
    let answered = false;
    const answer = (token: string | null) => {
      if (answered) return;
      answered = true;
      resolve(token);
    };
    const TokenForm = () => {
      const [value, setValue] = useState("");
      return (
        <Modal title="API token" onClose={() => answer(null)}>
          <form
            method="dialog"
            onSubmit={(e) => {
              e.preventDefault();
              answer(value.trim() === "" ? null : value.trim());
              closeDialog();
            }}
          >
            <p class="muted">{why} It is kept in this tab only (sessionStorage).</p>
            <label>
              Token
              <input
                name="token"
                type="password"
                autocomplete="off"
                required
                value={value}
                onInput={(e) => setValue(e.currentTarget.value)}
              />
            </label>
            <div class="buttons">
              <button
                type="button"
                onClick={() => {
                  answer(null);
                  closeDialog();
                }}
              >
                Cancel
              </button>
              <button type="submit" class="primary">
                Use token
              </button>
            </div>
          </form>
        </Modal>
      );
    };
    showDialog(<TokenForm />);
  });
}
