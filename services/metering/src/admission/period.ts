/** The UTC calendar month containing `at`: [start, end). */
export function periodOf(at: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start, end };
}

/** The period that starts on a date given as YYYY-MM-DD (as the database answers it). */
export function periodOfStart(date: string): { start: Date; end: Date } {
  const match = /^(\d{4})-(\d{2})-01$/.exec(date);
  if (!match) throw new Error(`not the first day of a month: ${date}`);
  return periodOf(new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)));
}
