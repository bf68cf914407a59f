/**
 * How every line names a repository: owner/name and the branch of the checkout (`acme/app (main)`), with its
 * folder when the line needs it (`acme/app (main, /home/ada/code/app)`); a folder outside git has no branch.
 * The service is said once, at the top of a command's output, or on the line when the command gives none.
 */
export function where(
  repository: string | { owner: string; name: string },
  branch: string | null,
  root?: string,
): string {
  const name = typeof repository === 'string' ? repository : `${repository.owner}/${repository.name}`;
  const inParens = [branch, root].filter((part) => part !== null && part !== undefined);
  return `${name}${inParens.length > 0 ? ` (${inParens.join(', ')})` : ''}`;
}
