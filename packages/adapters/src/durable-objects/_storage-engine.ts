import type { Result, SqlEngine, Statement, Value } from "../_sql/engine.js";
import { statementsOf } from "../_sql/engine.js";

/**
 * The part of a Durable Object's state (`ctx` of its constructor) the limiter uses: its
 * SQLite storage and its alarm. Written out here so that no Workers type package is needed.
 */
export interface DurableObjectState {
  storage: {
    sql: {
      exec(query: string, ...bindings: Value[]): { toArray(): Record<string, unknown>[]; readonly rowsWritten: number };
    };
    transactionSync<T>(run: () => T): T;
    setAlarm(scheduledTime: number): Promise<void>;
    getAlarm(): Promise<number | null>;
    deleteAll(): Promise<void>;
  };
}

/**
 * The SQL adapters' engine over a Durable Object's own SQLite storage: statements run
 * synchronously in the object, a unit in one `transactionSync`, at once. The runtime holds
 * back the object's answer until its writes are durable (the output gate), so nothing answered
 * is lost when the object restarts or is evicted.
 */
export function storageEngine(state: DurableObjectState): SqlEngine {
  const { storage } = state;
  const run = (statement: Statement): Result => {
    const { sql, args = [] } = typeof statement === "string" ? { sql: statement } : statement;
    if (!Array.isArray(args)) throw new TypeError("Durable Object storage binds positional arguments only");
    const cursor = storage.sql.exec(sql, ...(args as Value[]));
    const rows = cursor.toArray();
    return { rows, rowsAffected: cursor.rowsWritten };
  };
  const execute = async (statement: Statement) => run(statement);
  return {
    inProcess: true,
    read: execute,
    readVersion: execute,
    write: async (unit) => storage.transactionSync(() => statementsOf(unit).map(run)),
  };
}
