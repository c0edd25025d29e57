import unittest

from inventory import Item, Store
from inventory.report import render_report


class StoreTest(unittest.TestCase):
    def test_add_and_find(self):
        store = Store()
        store.add(Item("bolt", 25, 10))
        self.assertEqual(store.find("bolt").qty, 10)

    def test_total_value(self):
        store = Store()
        store.add(Item("bolt", 25, 10))
        store.add(Item("nut", 10, 3))
        self.assertEqual(store.total_value_cents(), 280)

    def test_report_flags_low_stock(self):
        store = Store()
        store.add(Item("gear", 1999, 2))
        self.assertIn("gear: 2 x 19.99 USD  (low stock)", render_report(store))


if __name__ == "__main__":
    unittest.main()
