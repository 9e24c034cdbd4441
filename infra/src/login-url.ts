/** `databaseUrl` with `login` as its user and no password (the server's authentication decides). */
export function urlAsLogin(databaseUrl: string, login: string): string {
  const url = new URL(databaseUrl);
  url.username = login;
  url.password = '';
  return url.toString();
}
