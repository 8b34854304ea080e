import type { Result, SqlEngine, Statement, WriteOptions } from "./engine.js";

/** How the items of one group become one write, and the write's results their answers. */
export interface GroupedWriteSpec<Item, Answer> {
  /** The statements that write every item of a group, made once, when the engine runs the write. */
  make(items: readonly Item[]): readonly Statement[];
  /** Each item's answer, in order of arrival, from the results of those statements. */
  answer(results: Result[], items: readonly Item[]): Answer[];
  /** Most items one group holds: a full group takes no more, the next caller opens another. */
  max?: number;
  /**
   * One write of a name at a time: a group opened while the name's last write is still running
   * is handed to the engine only when that write settles, and takes every caller until then.
   * For writes that contend on one row (a bucket's hits): a burst on a busy key then makes one
   * statement per round trip instead of one per turn, each waiting for the row's lock behind the
   * others and holding it across round trips under load.
   */
  oneAtATime?: boolean;
  options?: WriteOptions;
}

interface Group<Item, Answer> {
  items: Item[];
  waiting: { resolve: (answer: Answer) => void; reject: (error: unknown) => void }[];
}

/**
 * Callers that ask for the same kind of write before its statements are made share one write
 * (one round trip, one statement): the first caller of a name opens a group and hands the
 * engine a unit that makes the group's statements when the engine runs it, at the latest
 * after this turn of the event loop; until then later callers of that name join the group,
 * in order of arrival. So a busy key's concurrent hits are decided by one statement, and the
 * creates of one turn are inserted by one. Every caller is answered from the one write; a
 * failure rejects them all. The SQL adapters on every engine (libSQL, Postgres, D1) group
 * through this, so they share one meaning of "together".
 * @returns `join(name, item)`: resolves with the item's answer.
 */
export function groupedWrites<Item, Answer>(
  db: Pick<SqlEngine, "write">,
  spec: GroupedWriteSpec<Item, Answer>,
): (name: string, item: Item) => Promise<Answer> {
  const max = spec.max ?? Number.POSITIVE_INFINITY;
  /** Groups whose statements have not been made yet, by name. */
  const open = new Map<string, Group<Item, Answer>>();
  /** With `oneAtATime`: the last write of each name, until it settles. */
  const running = new Map<string, Promise<unknown>>();
  const close = (name: string, group: Group<Item, Answer>) => {
    if (open.get(name) === group) open.delete(name);
  };

  return (name, item) =>
    new Promise<Answer>((resolve, reject) => {
      const joined = open.get(name);
      if (joined !== undefined && joined.items.length < max) {
        joined.items.push(item);
        joined.waiting.push({ resolve, reject });
        return;
      }
      const group: Group<Item, Answer> = { items: [item], waiting: [{ resolve, reject }] };
      open.set(name, group);
      const unit = () => {
        // From now on the statements are made: a later caller opens a group of its own.
        close(name, group);
        return spec.make(group.items);
      };
      const before = spec.oneAtATime ? running.get(name) : undefined;
      const options = { ...spec.options, askedAt: performance.now() };
      const written = before === undefined ? db.write(unit, options) : before.then(() => db.write(unit, options));
      if (spec.oneAtATime) {
        const settled = written.then(
          () => undefined,
          () => undefined,
        );
        running.set(name, settled);
        void settled.then(() => {
          if (running.get(name) === settled) running.delete(name);
        });
      }
      written.then(
        (results) => {
          let answers: Answer[];
          try {
            answers = spec.answer(results, group.items);
          } catch (error) {
            for (const waiting of group.waiting) waiting.reject(error);
            return;
          }
          for (const [i, waiting] of group.waiting.entries()) waiting.resolve(answers[i]!);
        },
        (error: unknown) => {
          close(name, group);
          for (const waiting of group.waiting) waiting.reject(error);
        },
      );
    });
}
