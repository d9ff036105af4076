import { prefixStorage, type Storage } from "unstorage";

/** Per schedule trigger, the last slot it fired for, so a restart knows what it missed. */
export interface ScheduleState {
  /** The last slot fired (epoch ms), or null when it never fired. */
  lastDue(triggerId: string): Promise<number | null>;
  setLastDue(triggerId: string, due: number): Promise<void>;
  forget(triggerId: string): Promise<void>;
}

/**
 * The schedules' state in the service's storage (namespace `schedules`), shared by every
 * instance on one storage.
 * @example const state = scheduleState(stores.storage); await state.lastDue("trg_…") // null
 */
export function scheduleState(storage: Storage): ScheduleState {
  const ns = prefixStorage(storage, "schedules");
  return {
    async lastDue(triggerId) {
      const rec = await ns.getItem<{ due: string }>(triggerId);
      return rec ? Date.parse(rec.due) : null;
    },
    setLastDue: (triggerId, due) => ns.setItem(triggerId, { due: new Date(due).toISOString() }),
    forget: (triggerId) => ns.removeItem(triggerId),
  };
}
