// Names a client chose (unknown fields, arguments, parameters) as error messages quote them: a few,
// each cut short, so a request of 100,000 made-up keys does not come back as a megabyte of message.

const MAX_NAMED = 5;
const MAX_NAME_CHARS = 64;

/** One client-chosen name, cut to 64 characters. */
export function cutName(name: string): string {
  return name.length > MAX_NAME_CHARS ? `${name.slice(0, MAX_NAME_CHARS)}...` : name;
}

/** The first five names, quoted and cut, then how many more there were. */
export function nameSome(names: readonly string[]): string {
  const shown = names.slice(0, MAX_NAMED).map((name) => JSON.stringify(cutName(name)));
  return shown.join(", ") + (names.length > MAX_NAMED ? ` and ${names.length - MAX_NAMED} more` : "");
}
