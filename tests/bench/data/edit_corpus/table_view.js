'use strict';

/**
 * A small sortable, filterable table widget rendered into a container element.
 */

const DEFAULT_PAGE_SIZE = 25;

function escapeHtml(value) {
    return String(value)
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;')
        .replace(/'/g, '&#39;');
}

function compareValues(a, b) {
    if (a === b) {
        return 0;
    }
    if (a === null || a === undefined) {
        return -1;
    }
    if (b === null || b === undefined) {
        return 1;
    }
    if (typeof a === 'number' && typeof b === 'number') {
        return a - b;
    }
    return String(a).localeCompare(String(b));
}

class TableView {
    constructor(container, columns, options = {}) {
        this.container = container;
        this.columns = columns;
        this.rows = [];
        this.filter = '';
        this.sortKey = null;
        this.sortAsc = true;
        this.page = 0;
        this.pageSize = options.pageSize || DEFAULT_PAGE_SIZE;
        this.onRowClick = options.onRowClick || null;
    }

    setRows(rows) {
        this.rows = rows.slice();
        this.page = 0;
        this.render();
    }

    setFilter(text) {
        this.filter = text.trim().toLowerCase();
        this.page = 0;
        this.render();
    }

    sortBy(key) {
        if (this.sortKey === key) {
            this.sortAsc = !this.sortAsc;
        } else {
            this.sortKey = key;
            this.sortAsc = true;
        }
        this.render();
    }

    visibleRows() {
        let rows = this.rows;
        if (this.filter) {
            rows = rows.filter((row) =>
                this.columns.some((col) =>
                    String(row[col.key] ?? '').toLowerCase().includes(this.filter)));
        }
        if (this.sortKey !== null) {
            const key = this.sortKey;
            const sign = this.sortAsc ? 1 : -1;
            rows = rows.slice().sort((a, b) => sign * compareValues(a[key], b[key]));
        }
        return rows;
    }

    pageCount() {
        return Math.max(1, Math.ceil(this.visibleRows().length / this.pageSize));
    }

    goTo(page) {
        const last = this.pageCount() - 1;
        this.page = Math.min(Math.max(page, 0), last);
        this.render();
    }

    renderHeader() {
        const cells = this.columns.map((col) => {
            const marker = this.sortKey === col.key ? (this.sortAsc ? ' ▲' : ' ▼') : '';
            return `<th data-key="${escapeHtml(col.key)}">${escapeHtml(col.title)}${marker}</th>`;
        });
        return `<thead><tr>${cells.join('')}</tr></thead>`;
    }

    renderBody(rows) {
        if (rows.length === 0) {
            return `<tbody><tr><td colspan="${this.columns.length}">No rows</td></tr></tbody>`;
        }
        const body = rows.map((row, i) => {
            const cells = this.columns.map((col) => {
                const value = col.format ? col.format(row[col.key], row) : row[col.key];
                return `<td>${escapeHtml(value ?? '')}</td>`;
            });
            return `<tr data-index="${i}">${cells.join('')}</tr>`;
        });
        return `<tbody>${body.join('')}</tbody>`;
    }

    render() {
        const rows = this.visibleRows();
        const start = this.page * this.pageSize;
        const pageRows = rows.slice(start, start + this.pageSize);
        this.container.innerHTML = `<table>${this.renderHeader()}${this.renderBody(pageRows)}</table>` +
            `<div class="pager">Page ${this.page + 1} of ${this.pageCount()}</div>`;
        this.container.querySelectorAll('th').forEach((th) => {
            th.addEventListener('click', () => this.sortBy(th.dataset.key));
        });
        if (this.onRowClick) {
            this.container.querySelectorAll('tbody tr').forEach((tr) => {
                tr.addEventListener('click', () => {
                    const index = Number(tr.dataset.index);
                    this.onRowClick(pageRows[index]);
                });
            });
        }
    }
}

module.exports = { TableView, compareValues, escapeHtml };
