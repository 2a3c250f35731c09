/**
 * The functions of a TypeScript source and how many lines each spans, read with the compiler's
 * own parser: what the function-length check of test/lambda/layout.unit.test.ts measures.
 */
import ts from 'typescript';

export interface FunctionSpan {
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/** Every function with a body (declarations, methods, accessors, arrows, expressions). */
export function functionSpans(fileName: string, text: string): FunctionSpan[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const spans: FunctionSpan[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const line = lineOf(node.getStart(source));
      const named = ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent);
      const name =
        node.name?.getText(source) ??
        (named ? node.parent.name.getText(source) : undefined) ??
        '(anonymous)';
      spans.push({ name, line, lines: lineOf(node.getEnd()) - line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}
