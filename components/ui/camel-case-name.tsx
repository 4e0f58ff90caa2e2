import { Fragment } from "react";

/** Where a CamelCase name may break: before each capital that follows a lower-case letter or digit. */
export function camelCaseParts(name: string): string[] {
  return name.split(/(?<=[a-z0-9])(?=[A-Z])/);
}

/**
 * A long CamelCase name (an alert's) that breaks between its words on a narrow screen, never
 * inside one: "OnceboardUncaught" / "UniqueViolation", not "OnceboardUncaughtUniqueViolat" / "ion".
 */
export function CamelCaseName({ name }: { name: string }) {
  return (
    <>
      {camelCaseParts(name).map((part, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed name, in order
        <Fragment key={i}>
          {i > 0 ? <wbr /> : null}
          {part}
        </Fragment>
      ))}
    </>
  );
}
