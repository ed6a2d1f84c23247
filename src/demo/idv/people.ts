import type { PersonFields } from '../idvPages.js';

/** people confirmed recently, by sub: kept for their tokens and userinfo, the oldest forgotten first */
const MAX_PEOPLE = 1000;

/** The people the provider confirmed, in this process only. */
export interface People {
  get(sub: string): PersonFields | undefined;
  remember(sub: string, person: PersonFields): void;
}

export function createPeople(): People {
  const people = new Map<string, PersonFields>();
  return {
    get: (sub) => people.get(sub),
    remember(sub, person) {
      people.delete(sub);
      people.set(sub, person);
      if (people.size > MAX_PEOPLE) people.delete(people.keys().next().value!);
    },
  };
}
