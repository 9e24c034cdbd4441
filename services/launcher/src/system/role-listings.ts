import type { ServiceDescriptor } from '@outbox-inbox/service-kit';
import { roleProcesses } from './role-processes.ts';

/**
 * The files outside the services that list every role: the compose file runs each as a
 * container, the scrape config scrapes each, the launcher's README tables them. Each holds a
 * region written from the service descriptors by `./pnpm sync-roles`, so a role declared in
 * its service needs no edit of these files by hand; a test fails while a region is stale.
 */
export interface RoleListing {
  /** Relative to the repository's root. */
  readonly file: string;
  readonly open: string;
  readonly close: string;
  render(services: readonly ServiceDescriptor[]): string;
}

const GENERATED = 'written by ./pnpm sync-roles from the service descriptors; do not edit';

export const roleListings: readonly RoleListing[] = [
  {
    file: 'infra/docker-compose.yml',
    open: `  # >>> roles: ${GENERATED}`,
    close: '  # <<< roles',
    render: composeRoleServices,
  },
  {
    file: 'infra/observability/prometheus.yml',
    open: `      # >>> roles: ${GENERATED}`,
    close: '      # <<< roles',
    render: scrapeTargets,
  },
  {
    file: 'services/launcher/README.md',
    open: `<!-- >>> roles: ${GENERATED} -->`,
    close: '<!-- <<< roles -->',
    render: componentTable,
  },
];

/** `text` with the listing's region holding `body`; throws when its markers are missing. */
export function withRegion(text: string, listing: RoleListing, body: string): string {
  const start = text.indexOf(`${listing.open}\n`);
  const end = text.indexOf(listing.close, start);
  if (start < 0 || end < 0) {
    throw new Error(`${listing.file} lacks the lines "${listing.open}" … "${listing.close}"`);
  }
  return `${text.slice(0, start + listing.open.length + 1)}${body}${text.slice(end)}`;
}

/**
 * One container per role process, all alike but for the role, its login, its port and its
 * variable. Each role logs in as its own login, which the service's migrate container creates
 * with the role's declared grants; a relay as the owner, since RELAY_MODE=cdc has it create
 * its publication and heartbeat table.
 */
function composeRoleServices(services: readonly ServiceDescriptor[]): string {
  return roleProcesses({}, services)
    .map(({ name, service, role }) => {
      const port = service.ports[role];
      const portVariable = role === 'api' ? 'PORT' : 'OPS_PORT';
      const login = role === 'relay' ? 'postgres' : (service.logins[role] ?? 'postgres');
      return [
        `  ${name}:`,
        '    profiles: [app]',
        `    image: outbox-inbox/${service.name}`,
        `    command: [${service.programs.main}, --roles, ${role}]`,
        '    environment:',
        '      <<: *relay-mode',
        `      DATABASE_URL: postgres://${login}@postgres:5432/${service.database}`,
        '      KAFKA_BROKERS: kafka:29092',
        `      ${portVariable}: '${port}'`,
        '    ports:',
        `      - '${port}:${port}'`,
        '    depends_on:',
        `      ${service.componentPrefix}-migrate:`,
        '        condition: service_completed_successfully',
        '    restart: unless-stopped',
        '',
      ].join('\n');
    })
    .join('\n');
}

/** Each role's default port, labelled with its service and role for the alert rules. */
function scrapeTargets(services: readonly ServiceDescriptor[]): string {
  return roleProcesses({}, services)
    .map(({ service, role }) =>
      [
        `      - targets: ['127.0.0.1:${service.ports[role]}']`,
        `        labels: { service: ${service.name}, role: ${role} }`,
        '',
      ].join('\n'),
    )
    .join('');
}

/** A Markdown table of components, ports and summaries, padded as the formatter pads it. */
function componentTable(services: readonly ServiceDescriptor[]): string {
  const rows = roleProcesses({}, services).map(({ name, service, role }) => [
    `\`${name}\``,
    String(service.ports[role]),
    service.summaries[role] ?? '',
  ]);
  const header = ['Component', 'Port', 'What'];
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |\n`;
  const table = [header, widths.map((width) => '-'.repeat(width)), ...rows].map(line).join('');
  // Blank lines around it, as the formatter puts them between a table and an HTML comment.
  return `\n${table}\n`;
}
