using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;

namespace Acme.Inventory
{
    public sealed class StockItem
    {
        public string Sku { get; }
        public string Name { get; }
        public int Quantity { get; private set; }
        public decimal UnitPrice { get; }

        public StockItem(string sku, string name, int quantity, decimal unitPrice)
        {
            if (string.IsNullOrWhiteSpace(sku))
            {
                throw new ArgumentException("SKU must not be empty", nameof(sku));
            }
            Sku = sku;
            Name = name;
            Quantity = quantity;
            UnitPrice = unitPrice;
        }

        public decimal Value => Quantity * UnitPrice;

        public void Remove(int count)
        {
            if (count > Quantity)
            {
                throw new InvalidOperationException($"only {Quantity} of {Sku} in stock");
            }
            Quantity -= count;
        }

        public void Add(int count)
        {
            if (count < 0)
            {
                throw new ArgumentOutOfRangeException(nameof(count));
            }
            Quantity += count;
        }
    }

    public sealed class Warehouse
    {
        private readonly Dictionary<string, StockItem> _items = new();

        public IReadOnlyCollection<StockItem> Items => _items.Values;

        public void Receive(StockItem item)
        {
            if (_items.TryGetValue(item.Sku, out var existing))
            {
                existing.Add(item.Quantity);
                return;
            }
            _items[item.Sku] = item;
        }

        public bool TryShip(string sku, int count)
        {
            if (!_items.TryGetValue(sku, out var item) || item.Quantity < count)
            {
                return false;
            }
            item.Remove(count);
            return true;
        }

        public decimal TotalValue() => _items.Values.Sum(i => i.Value);

        public IEnumerable<StockItem> LowStock(int threshold = 5)
        {
            return _items.Values
                .Where(i => i.Quantity <= threshold)
                .OrderBy(i => i.Quantity)
                .ThenBy(i => i.Sku);
        }

        public void ExportCsv(TextWriter writer)
        {
            writer.WriteLine("sku,name,quantity,unit_price");
            foreach (var item in _items.Values.OrderBy(i => i.Sku))
            {
                var name = item.Name.Replace("\"", "\"\"");
                writer.WriteLine($"{item.Sku},\"{name}\",{item.Quantity},{item.UnitPrice:F2}");
            }
        }
    }
}
