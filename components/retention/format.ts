/** Small formatters for the Retention page. */
export function formatSeconds(seconds: number | null): string {
  if (seconds === null) return "none yet";
  if (seconds >= 86_400) return `${Math.round((seconds / 86_400) * 10) / 10} d`;
  if (seconds >= 3600) return `${Math.round((seconds / 3600) * 10) / 10} h`;
  if (seconds >= 60) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds)} s`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} B`;
}

/** "2026-11-30 14:00" in UTC: partition bounds are UTC. */
export function formatUtc(iso: string | null): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : "?";
}
