const CREATE_FUNCTION = /CREATE (?:OR REPLACE )?FUNCTION (?:onceboard\.)?(\w+)\(/g;

/** Every `CREATE [OR REPLACE] FUNCTION [onceboard.]name(…) … $$ … $$;` in a SQL text, in order. */
export function functionDefinitions(sql: string): { name: string; definition: string }[] {
  const found: { name: string; definition: string }[] = [];
  for (const m of sql.matchAll(CREATE_FUNCTION)) {
    const start = m.index ?? 0;
    const open = sql.indexOf("$$", start);
    const close = sql.indexOf("$$", open + 2);
    const end = sql.indexOf(";", close);
    if (open < 0 || close < 0 || end < 0) throw new Error(`unterminated function ${m[1]}`);
    found.push({ name: m[1] ?? "", definition: sql.slice(start, end + 1) });
  }
  return found;
}
