export interface AuditRow {
  id: string;
  at: string;
  tokenId: string | null;
  actor: string;
  tenantId: string | null;
  action: string;
  target: string | null;
  result: string;
  detail: unknown;
  ip: string | null;
}

export interface AuditResponse {
  entries: AuditRow[];
  nextCursor: string | null;
}
