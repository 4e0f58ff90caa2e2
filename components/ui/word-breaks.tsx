import { Children, cloneElement, Fragment, isValidElement, type ReactNode } from "react";

/** The text as parts, a line break allowed between two: each part ends where `after` matches. */
function WithBreaks({ parts }: { parts: string[] }) {
  return (
    <>
      {parts.map((part, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed text, in order
        <Fragment key={i}>
          {i > 0 ? <wbr /> : null}
          {part}
        </Fragment>
      ))}
    </>
  );
}

/** Where a CamelCase name may break: before each capital that follows a lower-case letter or digit. */
export function camelCaseParts(name: string): string[] {
  return name.split(/(?<=[a-z0-9])(?=[A-Z])/);
}

/**
 * A long CamelCase name (an alert's) that breaks between its words on a narrow screen, never
 * inside one: "OnceboardUncaught" / "UniqueViolation", not "OnceboardUncaughtUniqueViolat" / "ion".
 */
export function CamelCaseName({ name }: { name: string }) {
  return <WithBreaks parts={camelCaseParts(name)} />;
}

/** Where an identifier may break: after each of its separators (. _ - / : @ |), never inside a run of letters or digits. */
export function identifierParts(id: string): string[] {
  return id.split(/(?<=[._\-/:@|])(?=.)/);
}

/**
 * Every string inside `node` (down to `depth` elements: a link's text, a code's) with a line
 * break allowed after each identifier separator: a column of ids can be narrower than its longest
 * id without cutting one, or breaking one inside a word.
 */
export function withIdentifierBreaks(node: ReactNode, depth = 3): ReactNode {
  if (typeof node === "string") return identifierParts(node).length > 1 ? <WithBreaks parts={identifierParts(node)} /> : node;
  if (depth === 0 || !isValidElement<{ children?: ReactNode }>(node) || node.props.children === undefined) {
    if (Array.isArray(node)) return Children.map(node, (child) => withIdentifierBreaks(child, depth));
    return node;
  }
  return cloneElement(
    node,
    undefined,
    ...Children.toArray(node.props.children).map((child) => withIdentifierBreaks(child, depth - 1)),
  );
}
